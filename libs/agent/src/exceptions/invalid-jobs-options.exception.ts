import { INVALID_JOBS_OPTIONS_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** A boot error: `AgentJobsModule.forRoot(options)` has a field of the wrong type or out of range, or AgentWorkerModule is missing. */
export class InvalidJobsOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(INVALID_JOBS_OPTIONS_MESSAGE(field, problem));
    this.name = 'InvalidJobsOptionsException';
  }
}
