import { ZmoduError } from '@zmodu/core';
/** The input of a proposal or a decision is malformed; `field` names what to fix. HTTP: 400. */
export class InvalidProposalException extends ZmoduError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidProposalException';
  }
}
