/** No such proposal for this tenant (also the answer for another tenant's proposal: no existence oracle). */
export class ProposalNotFoundException extends Error {
  constructor(id: string) {
    super(`No proposal ${id}.`);
    this.name = 'ProposalNotFoundException';
  }
}

/** The proposal is no longer pending (already decided, executed or expired). */
export class ProposalConflictException extends Error {
  constructor(
    readonly status: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProposalConflictException';
  }
}

/** This caller may not decide this step (separation of duties, or a missing permission). */
export class ApprovalForbiddenException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalForbiddenException';
  }
}

/** The input of a proposal or a decision is malformed. */
export class InvalidProposalException extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidProposalException';
  }
}
