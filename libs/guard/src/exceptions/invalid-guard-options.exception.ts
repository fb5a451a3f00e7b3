import { ZmoduError } from '@zmodu/core';

/** Bad store options in GuardModule.forRoot (or AgentModule's `guard`): thrown at boot, naming the option. */
export class InvalidGuardOptionsException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidGuardOptionsException';
  }
}
