import { ZmoduError } from '@zmodu/core';
/**
 * Throw from a skill handler to give the model a reason it may see (and act on).
 * Any other error reaches the model only as `internal_error`: its text stays in the logs.
 */
export class SkillError extends ZmoduError {
  constructor(
    readonly reason: string,
    message?: string,
    readonly details?: Record<string, unknown>,
    /** The `error` field the model sees. Default 'SkillFailed'. */
    override readonly code: string = 'SkillFailed',
  ) {
    super(message ?? reason);
    this.name = 'SkillError';
  }
}
