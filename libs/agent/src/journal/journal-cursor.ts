import { createHash } from 'node:crypto';
import { canonicalJson, ZmoduError } from '@zmodu/core';
import type { ToolCallRecord } from '../agent-run';
import type { ModelRequest, ModelTurn } from '../providers/model-provider';
import { JOURNAL_MISMATCH_MESSAGE } from '../agent.messages';
import { JournaledTurn, RunJournal, RunJournalEntry } from './run-journal';

/**
 * The run may not go on: its journal could not take the next entry (its claim was lost, or its store failed). Agent.run
 * catches it and ends the run `aborted` with its message: it never reaches a caller.
 */
export class RunJournalStoppedException extends ZmoduError {
  constructor(
    message: string,
    /** true: the claim was lost (another instance holds the run); false: the store failed. */
    readonly fenced: boolean,
  ) {
    super(message);
    this.name = 'RunJournalStoppedException';
  }
}

/** What the journal holds for a tool call: done (its record), in flight when the process died (an intent), or nothing. */
export type JournaledCall =
  /** `decided`: the call waited for a human, and the decision is its result. */
  | { readonly kind: 'done'; readonly record: ToolCallRecord; readonly spent: number; readonly decided?: true }
  | { readonly kind: 'in_flight' }
  /** The call put a proposal in front of a human, and no decision is journaled yet: the run still waits on it. */
  | { readonly kind: 'waiting'; readonly record: ToolCallRecord; readonly spent: number; readonly proposalId: string }
  | { readonly kind: 'none' };

/** SHA-256 of a model request as the journal records it (system prompt, messages and tool names; no signal, no callback). */
export function requestDigest(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): string {
  const shown = { system: request.system, messages: request.messages, tools: request.tools.map((t) => t.name) };
  return createHash('sha256').update(canonicalJson(shown)).digest('hex');
}

/**
 * A run's way through its journal: first the entries of earlier attempts, in order (a replay: what they hold is not
 * done again), then the new ones, each written before the run goes on. Without a journal (a run outside the worker),
 * nothing is replayed and nothing is written.
 */
export class JournalCursor {
  private next = 0;
  private seq: number;
  /** Outcomes of reads not written yet: they go with the next write (a retry that lost them repeats the read). */
  private pending: RunJournalEntry[] = [];

  /**
   * The decisions journaled at resumes that answer their proposal's wait entry, by proposal: those journaled before
   * any model turn after that wait (the run waited for them). A decision journaled after a later turn (an agent with
   * `resumeOn: 'each'` went on, told the proposal was pending) is a late one: told to the model as a message at the
   * run's next final answer (`lateDecisions`).
   */
  private readonly decisions = new Map<string, Extract<RunJournalEntry, { kind: 'decision' }>>();
  /** The seqs of the late decisions (see `decisions`), and those told already. */
  private readonly late = new Set<number>();
  private readonly toldLate = new Set<number>();

  /** `lateInLine`: the run's agent resumes on each decision (`resumeOn: 'each'`); otherwise every decision answers its wait. */
  constructor(
    private readonly journal: RunJournal | undefined,
    lateInLine = false,
  ) {
    this.seq = journal?.entries.length ?? 0;
    const open = new Set<string>(); // proposals whose wait no turn followed yet
    for (const e of journal?.entries ?? []) {
      if (e.kind === 'wait') open.add(e.proposalId);
      else if (e.kind === 'turn') open.clear();
      else if (e.kind === 'decision' && !this.decisions.has(e.proposalId)) {
        if (!lateInLine || open.has(e.proposalId)) this.decisions.set(e.proposalId, e);
        else this.late.add(e.seq);
      }
    }
  }

  /**
   * The late decisions to tell at a final answer: those not told yet that come before the next model turn in the
   * journal (all of them, past the last), in order. Where an earlier attempt told one, a replay tells it again.
   */
  lateDecisions(): Array<Extract<RunJournalEntry, { kind: 'decision' }>> {
    const entries = this.journal?.entries ?? [];
    let bound = entries.length;
    for (let i = this.next; i < entries.length; i++)
      if (entries[i].kind === 'turn') {
        bound = i;
        break;
      }
    const found: Array<Extract<RunJournalEntry, { kind: 'decision' }>> = [];
    for (const seq of [...this.late].sort((a, b) => a - b)) {
      const entry = entries[seq];
      if (seq >= bound || this.toldLate.has(seq) || entry?.kind !== 'decision') continue;
      this.toldLate.add(seq);
      found.push(entry);
    }
    return found;
  }

  /** Proposals with a late decision not told yet: decided, so the run does not wait on them again. */
  decidedLate(): Set<string> {
    const entries = this.journal?.entries ?? [];
    const ids = new Set<string>();
    for (const seq of this.late) {
      const entry = entries[seq];
      if (!this.toldLate.has(seq) && entry?.kind === 'decision') ids.add(entry.proposalId);
    }
    return ids;
  }

  /** Whether the run has a journal (what is not written need not be made). */
  get active(): boolean {
    return this.journal !== undefined;
  }

  /** Entries of earlier attempts not replayed yet. */
  get replaying(): boolean {
    return this.peek() !== undefined;
  }

  /** The journaled answer of model turn `step`, if an earlier attempt had it. */
  turn(step: number): JournaledTurn | undefined {
    const entry = this.peek();
    if (!entry) return undefined;
    if (entry.kind !== 'turn' || entry.step !== step) throw this.mismatch(`model turn ${step}`, entry);
    this.next++;
    return entry.turn;
  }

  /** What the journal holds of tool call `call` of turn `step`. */
  call(step: number, call: number): JournaledCall {
    const entry = this.peek();
    if (!entry) return { kind: 'none' };
    if ((entry.kind !== 'call' && entry.kind !== 'intent' && entry.kind !== 'wait') || entry.step !== step || entry.call !== call)
      throw this.mismatch(`tool call ${call} of turn ${step}`, entry);
    this.next++;
    if (entry.kind !== 'intent') return this.held(entry);
    // An intent: the process died while the call ran, or before its outcome was written. The outcome, if any, comes next.
    const after = this.peek();
    if ((after?.kind === 'call' || after?.kind === 'wait') && after.step === step && after.call === call) {
      this.next++;
      return this.held(after);
    }
    return { kind: 'in_flight' };
  }

  /** What a `call` or `wait` entry says of its call: done, or waiting on a proposal no decision answers yet. */
  private held(entry: Extract<RunJournalEntry, { kind: 'call' | 'wait' }>): JournaledCall {
    if (entry.kind === 'call') return { kind: 'done', record: entry.record, spent: entry.spent };
    const decided = this.decisions.get(entry.proposalId);
    if (!decided) return { kind: 'waiting', record: entry.record, spent: entry.spent, proposalId: entry.proposalId };
    // The model is told the decision as this call's result (what it waited for): the call answered, whatever was decided.
    return {
      kind: 'done',
      record: { ...entry.record, ok: true, outcome: 'ok', observation: decided.observation },
      spent: entry.spent,
      decided: true,
    };
  }

  async turnAnswered(step: number, request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>, turn: JournaledTurn): Promise<void> {
    await this.write({ kind: 'turn', seq: this.place(), step, requestDigest: requestDigest(request), turn });
  }

  /** A call whose proposal waits for a human: written now (the run suspends after its turn's other calls). */
  async callWaiting(step: number, call: number, proposalId: string, record: ToolCallRecord, spent: number): Promise<void> {
    await this.write({ kind: 'wait', seq: this.place(), step, call, proposalId, record, spent });
  }

  async callStarting(step: number, call: number, skill: string): Promise<void> {
    await this.write({ kind: 'intent', seq: this.place(), step, call, skill });
  }

  /** A call's outcome: written now when it had an effect (or may have), with the next write when it was a read's. */
  async callDone(step: number, call: number, record: ToolCallRecord, spent: number, effect: boolean): Promise<void> {
    const entry: RunJournalEntry = { kind: 'call', seq: this.place(), step, call, record, spent };
    if (effect) await this.write(entry);
    else this.hold(entry);
  }

  /** Write what is held (the run ends: nothing comes after). */
  async flush(): Promise<void> {
    if (this.pending.length > 0) await this.write();
  }

  /** The place of the next entry: after those written and those held. */
  private place(): number {
    return this.seq + this.pending.length;
  }

  private hold(entry: RunJournalEntry): void {
    if (!this.journal) return;
    this.refuseDuringReplay(entry);
    this.pending.push(entry);
  }

  /** The next entry to replay; the decisions are read by their proposal (or by `lateDecisions`), not in line. */
  private peek(): RunJournalEntry | undefined {
    if (!this.journal) return undefined;
    const entries = this.journal.entries;
    while (this.next < entries.length && entries[this.next].kind === 'decision') this.next++;
    return this.next < entries.length ? entries[this.next] : undefined;
  }

  private mismatch(expected: string, found: RunJournalEntry): RunJournalStoppedException {
    return new RunJournalStoppedException(JOURNAL_MISMATCH_MESSAGE(expected, `${found.kind} at step ${found.step}`), false);
  }

  /** A replay is over before anything new is written: what an earlier attempt wrote and this one did not read would collide with it. */
  private refuseDuringReplay(entry: RunJournalEntry): void {
    if (this.replaying) throw this.mismatch(`${entry.kind} at step ${entry.step}`, this.peek() as RunJournalEntry);
  }

  private async write(entry?: RunJournalEntry): Promise<void> {
    if (!this.journal) return;
    if (entry) this.refuseDuringReplay(entry);
    const batch = entry ? [...this.pending, entry] : this.pending;
    let stored: boolean;
    try {
      stored = await this.journal.append(batch);
    } catch (err) {
      throw new RunJournalStoppedException(
        `the run's journal could not be written: ${err instanceof Error ? err.message : String(err)}`,
        false,
      );
    }
    if (!stored) throw new RunJournalStoppedException('the run was taken over by another instance (its claim was lost)', true);
    this.seq += batch.length;
    this.pending = [];
  }
}

/**
 * A model turn as the journal keeps it (see JournaledTurn): `digestArgs` gives the arguments a skill's audit keeps,
 * `redact` the text as callers read it (a secret the model wrote is not kept; a replay shows the model its text so).
 */
export function journaledTurn(
  turn: ModelTurn,
  usage: JournaledTurn['usage'],
  digestArgs: (name: string, args: unknown) => unknown,
  redact: (text: string) => string = (text) => text,
): JournaledTurn {
  return {
    text: redact(turn.text),
    ...(turn.refusal !== undefined ? { refusal: redact(turn.refusal) } : {}),
    toolCalls: turn.toolCalls.map((c) => {
      const kept = digestArgs(c.name, c.arguments);
      const masked = canonicalJson(kept) !== canonicalJson(c.arguments);
      return { id: c.id, name: c.name, arguments: kept, ...(masked ? { masked: true as const } : {}) };
    }),
    ...(turn.omittedToolCalls !== undefined ? { omittedToolCalls: turn.omittedToolCalls } : {}),
    usage,
  };
}
