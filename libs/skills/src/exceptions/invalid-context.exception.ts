export class InvalidSkillContextException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSkillContextException';
  }
}
