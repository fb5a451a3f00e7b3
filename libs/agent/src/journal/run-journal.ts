import type { ToolCallRecord } from '../agent-run';
import type { TokenUsage, ToolCall } from '../providers/model-provider';

/**
 * A model turn as a run's journal keeps it: what the model answered, as the conversation carries it back to the model
 * (the text as the model wrote it; the arguments of a skill whose audit keeps a digest of its arguments, as that
 * digest), and the tokens it was charged (reported, or estimated when the server reported none).
 */
export interface JournaledTurn {
  readonly text: string;
  readonly refusal?: string;
  /** `masked`: the arguments kept are not those the model sent (x-sensitive fields masked, or a digest). */
  readonly toolCalls: ReadonlyArray<ToolCall & { readonly masked?: true }>;
  readonly omittedToolCalls?: number;
  readonly usage: TokenUsage;
}

/**
 * One entry of a run's journal, at its place `seq` (0, 1, ...): written once, before the run goes on. `turn`: model
 * turn `step` was answered (`requestDigest`: SHA-256 of the request it answered, for an audit of the replay). `intent`:
 * tool call `call` of turn `step`, to a skill that is not a read, is about to be dispatched. `call`: that tool call
 * was dispatched (or refused): its record as the run shows it, with the observation the model saw, and what the guard's
 * budget was charged (`spent`). A skill whose audit keeps a digest of its arguments or its result (the memory skills:
 * what an erase deletes must leave no copy) has that digest here instead, and a replay gives the model the digest.
 */
export type RunJournalEntry =
  | { readonly kind: 'turn'; readonly seq: number; readonly step: number; readonly requestDigest: string; readonly turn: JournaledTurn }
  | { readonly kind: 'intent'; readonly seq: number; readonly step: number; readonly call: number; readonly skill: string }
  | {
      readonly kind: 'call';
      readonly seq: number;
      readonly step: number;
      readonly call: number;
      readonly record: ToolCallRecord;
      readonly spent: number;
    }
  /**
   * Tool call `call` of turn `step` put a proposal in front of a human (needs_human, execute_not_permitted) and the run
   * waits for the decision (a worker's run): `record` is the call as it stood; the model is told the decision instead.
   */
  | {
      readonly kind: 'wait';
      readonly seq: number;
      readonly step: number;
      readonly call: number;
      readonly proposalId: string;
      readonly record: ToolCallRecord;
      readonly spent: number;
    }
  /**
   * The decision on a proposal the run waited on, as the pipeline's store held it when the run resumed (written by the
   * worker at the resume, after the entries of the wait): what the model is told as that tool call's result.
   */
  | {
      readonly kind: 'decision';
      readonly seq: number;
      readonly step: number;
      readonly proposalId: string;
      readonly status: 'executed' | 'rejected' | 'failed' | 'expired';
      readonly observation: string;
    };

/**
 * A run's journal, as the agent loop uses it (AgentRunContext.journal): the entries of its earlier attempts, and where
 * it writes the next ones. `append` resolves when the entries (consecutive places, in order) are stored, false when the
 * run may not go on (the claim it runs under was lost: another instance holds the run now); it rejects when the store
 * failed. The loop writes a model turn before anything it asks for runs, and the intent of a call that is not a read
 * before the call; the outcome of a read (which a retry may repeat: it has no effect) goes with the next write.
 */
export interface RunJournal {
  readonly entries: readonly RunJournalEntry[];
  append(entries: readonly RunJournalEntry[]): Promise<boolean>;
}

/**
 * The most entries a store reads back of one run: 100 turns (maxSteps at most) of 256 calls each write at most 77,000
 * (a turn, and for each call an intent and its outcome, or a wait and its decision).
 */
export const MAX_JOURNAL_ENTRIES = 80_000;

/** A journal page's bounds, checked: after seq -1 (the first entry) by default, at most MAX_JOURNAL_ENTRIES. */
export function journalPage(page: { readonly afterSeq?: number; readonly limit?: number } | undefined): {
  afterSeq: number;
  limit: number;
} {
  const after = page?.afterSeq;
  const limit = page?.limit;
  return {
    afterSeq: Number.isSafeInteger(after) && (after as number) >= -1 ? (after as number) : -1,
    limit: Number.isSafeInteger(limit) && (limit as number) >= 0 ? Math.min(limit as number, MAX_JOURNAL_ENTRIES) : MAX_JOURNAL_ENTRIES,
  };
}
