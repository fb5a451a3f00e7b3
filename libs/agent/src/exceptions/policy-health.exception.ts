import { ZmoduError } from '@zmodu/core';
export class PolicyHealthException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyHealthException';
  }
}
