/** No such proposal for this tenant (also the answer for another tenant's proposal: no existence oracle). */
export class ProposalNotFoundException extends Error {
  constructor(id: string) {
    super(`No proposal ${id}.`);
    this.name = 'ProposalNotFoundException';
  }
}

/** Where a proposal stands now: what a caller must read again after a conflict. */
export interface ProposalPosition {
  readonly status: string;
  readonly version: number;
  /** The index of the step that waits, or null when none does. */
  readonly step: number | null;
}

/**
 * The decision does not apply to the proposal as it is: no longer pending (decided, executed,
 * expired), or changed since the caller read it (another version or another step waits).
 * Nothing was written and nothing executed; `current` says what to read again.
 */
export class ProposalConflictException extends Error {
  constructor(
    readonly status: string,
    message: string,
    readonly current?: ProposalPosition,
  ) {
    super(message);
    this.name = 'ProposalConflictException';
  }
}

/** An approval with an edited payload that cannot apply: the edit breaks the schema, has no amount, or the risk review rejects it. */
export class ProposalEditRefusedException extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ProposalEditRefusedException';
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
