import { ZmoduError } from '@zmodu/core';
export class InvalidSkillContextException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSkillContextException';
  }
}
