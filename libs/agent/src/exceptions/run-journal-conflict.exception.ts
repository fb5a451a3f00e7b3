import { ZmoduError } from '@zmodu/core';
import { JOURNAL_CONFLICT_MESSAGE } from '../agent.messages';

/** A run journal store was asked to write an entry at a place another entry holds (AgentRunStore.appendJournal). */
export class RunJournalConflictException extends ZmoduError {
  constructor(
    readonly runId: string,
    readonly seq: number,
  ) {
    super(JOURNAL_CONFLICT_MESSAGE(runId, seq));
    this.name = 'RunJournalConflictException';
  }
}
