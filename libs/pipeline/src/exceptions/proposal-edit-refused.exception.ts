import { ZmoduError } from '@zmodu/core';
/**
 * An approval with an edited payload that cannot apply: the edit breaks the schema, has no amount, or the risk review
 * rejects it. HTTP: 422.
 */
export class ProposalEditRefusedException extends ZmoduError {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ProposalEditRefusedException';
  }
}
