import type { ToolCallRecord } from '../tool-call-record';
import { JournalCursor } from './journal-cursor';
import type { RunJournalEntry } from './run-journal';

const record = (id: string): ToolCallRecord => ({
  id,
  name: 'approval.submit',
  arguments: {},
  decision: 'allowed',
  cause: null,
  outcome: 'ok',
  ok: true,
  observation: '{"verdict":"needs_human"}',
  durationMs: 1,
});
const turn = (seq: number, step: number): RunJournalEntry => ({
  kind: 'turn',
  seq,
  step,
  requestDigest: 'd',
  turn: { text: '', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } },
});
const wait = (seq: number, call: number, proposalId: string): RunJournalEntry => ({
  kind: 'wait',
  seq,
  step: 0,
  call,
  proposalId,
  record: record(proposalId),
  spent: 0,
});
const decision = (seq: number, step: number, proposalId: string): RunJournalEntry => ({
  kind: 'decision',
  seq,
  step,
  proposalId,
  status: 'executed',
  observation: `{"proposalId":"${proposalId}","decision":"executed"}`,
});
const journal = (entries: RunJournalEntry[]) => ({ entries, append: () => Promise.resolve(true) });

describe('JournalCursor: decisions that answer a wait, and late ones (resumeOn each)', () => {
  // Turn 0 asked for A and B; A's decision came first (the run went on: turn 1), B's after turn 1; then turn 2.
  const entries = [turn(0, 0), wait(1, 0, 'A'), wait(2, 1, 'B'), decision(3, 0, 'A'), turn(4, 1), decision(5, 1, 'B'), turn(6, 2)];

  it('resumeOn each: a decision after a later turn does not answer its call; it is told at the final answer it came before', () => {
    const cursor = new JournalCursor(journal(entries), true);
    expect(cursor.decidedLate()).toEqual(new Set(['B']));
    cursor.turn(0);
    expect(cursor.call(0, 0)).toMatchObject({ kind: 'done', decided: true, record: { observation: expect.stringContaining('"A"') } });
    expect(cursor.call(0, 1)).toMatchObject({ kind: 'waiting', proposalId: 'B' });
    // Before turn 1 is replayed, B's decision lies beyond the next turn: not told yet.
    expect(cursor.lateDecisions()).toEqual([]);
    cursor.turn(1);
    expect(cursor.lateDecisions().map((d) => d.proposalId)).toEqual(['B']);
    expect(cursor.lateDecisions()).toEqual([]); // told once
    expect(cursor.decidedLate()).toEqual(new Set());
    cursor.turn(2);
    expect(cursor.replaying).toBe(false);
  });

  it("resumeOn all: every decision answers its proposal's call, wherever it stands, and none is late", () => {
    const cursor = new JournalCursor(journal(entries), false);
    expect(cursor.decidedLate()).toEqual(new Set());
    cursor.turn(0);
    expect(cursor.call(0, 0)).toMatchObject({ kind: 'done', decided: true });
    expect(cursor.call(0, 1)).toMatchObject({ kind: 'done', decided: true });
    cursor.turn(1);
    expect(cursor.lateDecisions()).toEqual([]);
  });
});
