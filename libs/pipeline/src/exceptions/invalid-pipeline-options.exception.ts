/** PipelineModule options that cannot work (`executors`, the shape of `actions`, an amount that is not a function): boot fails. */
export class InvalidPipelineOptionsException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPipelineOptionsException';
  }
}
