import { INVALID_WORKER_OPTIONS_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** A boot error: `AgentWorkerModule.forRoot(options)` has a field out of range or of the wrong type. */
export class InvalidWorkerOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(INVALID_WORKER_OPTIONS_MESSAGE(field, problem));
    this.name = 'InvalidWorkerOptionsException';
  }
}
