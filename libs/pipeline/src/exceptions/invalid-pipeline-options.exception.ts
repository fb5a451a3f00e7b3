import { ZmoduError } from '@zmodu/core';
/** PipelineModule options that cannot work (`executors`, the shape of `actions`, an amount that is not a function): boot fails. */
export class InvalidPipelineOptionsException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPipelineOptionsException';
  }
}
