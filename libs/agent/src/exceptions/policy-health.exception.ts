export class PolicyHealthException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyHealthException';
  }
}
