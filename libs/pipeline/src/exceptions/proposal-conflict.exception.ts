import { ZmoduError } from '@zmodu/core';
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
 * Nothing was written and nothing executed; `current` says what to read again. HTTP: 409.
 */
export class ProposalConflictException extends ZmoduError {
  constructor(
    readonly status: string,
    message: string,
    readonly current?: ProposalPosition,
  ) {
    super(message);
    this.name = 'ProposalConflictException';
  }
}
