import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Skill } from '@zmodu/skills';
import { AgentRunResult } from '../agent-run';
import { AgentModule } from '../agent.module';
import { AgentRegistry } from '../agent.registry';
import { ModelProvider, ModelRequest, ModelTurn } from '../providers/model-provider';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { RunJournal, RunJournalEntry } from './run-journal';

/** The skills' calls, counted per run of the test (a call that ran again is counted twice). */
const calls = { quote: 0, place: 0, keyed: 0, note: 0 };
/** The pins order.place was called with: only ever the model's own (never the journal's masked copy). */
const pins: string[] = [];

@Injectable()
class DeskSkills {
  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } } },
  })
  quote(args: { symbol: string }) {
    calls.quote++;
    return { symbol: args.symbol, price: 101.3 };
  }

  @Skill({
    name: 'order.place',
    action: 'execute',
    description: 'Place an order (not idempotent)',
    parameters: { type: 'object', properties: { qty: { type: 'integer' }, pin: { type: 'string', 'x-sensitive': true } } },
  })
  place(args: { pin?: string }) {
    calls.place++;
    pins.push(String(args.pin));
    return { orderId: `o${calls.place}` };
  }

  @Skill({ name: 'order.keyed', action: 'execute', idempotent: true, description: 'Keyed by the run', parameters: { type: 'object' } })
  keyed() {
    calls.keyed++;
    return { hedge: 'placed' };
  }

  @Skill({
    name: 'note.keep',
    action: 'propose',
    audit: { args: 'digest', result: 'digest' },
    description: 'Keep a private note',
    parameters: { type: 'object', properties: { content: { type: 'string' } } },
  })
  note(args: { content: string }) {
    calls.note++;
    return { kept: args.content };
  }
}

/** A model that counts the turns it is asked for. */
class CountingModel implements ModelProvider {
  readonly name = 'counting';
  asked = 0;
  constructor(private readonly inner: ModelProvider) {}
  complete(request: ModelRequest): Promise<ModelTurn> {
    this.asked++;
    return this.inner.complete(request);
  }
}

const SCRIPT = [
  {
    text: 'Using key sk-proj-abcdefghijklmnopqrstuvwxyz1234567890 to place it.',
    toolCalls: [
      { name: 'market.quote', arguments: { symbol: 'ACME' } },
      { name: 'order.place', arguments: { qty: 10, pin: '8642-sensitive' } },
    ],
  },
  {
    toolCalls: [
      { name: 'order.keyed', arguments: { hedge: true } },
      { name: 'note.keep', arguments: { content: 'the secret plan' } },
    ],
  },
  { text: 'The order executed at 101.3; the hedge is placed.' },
];
const ALLOWED = ['market.quote', 'order.place', 'order.keyed', 'note.keep'];
const CONTEXT = { tenantId: 't1', userId: 'alice', permissions: [], runId: 'run-1' };

/** A journal in memory, as a store keeps it (JSON: nothing shared with the run), with what the run wrote to it. */
function journalOf(
  entries: readonly RunJournalEntry[],
  append?: (batch: readonly RunJournalEntry[]) => Promise<boolean>,
): RunJournal & { written: RunJournalEntry[]; writes: number } {
  const journal = {
    entries: JSON.parse(JSON.stringify(entries)) as RunJournalEntry[],
    written: [] as RunJournalEntry[],
    writes: 0,
    append: async (batch: readonly RunJournalEntry[]) => {
      if (append && !(await append(batch))) return false;
      journal.writes++;
      journal.written.push(...(JSON.parse(JSON.stringify(batch)) as RunJournalEntry[]));
      return true;
    },
  };
  return journal;
}

describe('the run journal (Agent.run with AgentRunContext.journal)', () => {
  let app: TestingModule;
  let model: CountingModel;

  async function boot(): Promise<void> {
    model = new CountingModel(new ScriptedModelProvider(SCRIPT));
    app = await Test.createTestingModule({
      imports: [
        AgentModule.forRoot({
          agents: [{ name: 'desk', provider: model, skills: ALLOWED, guard: { allow: ALLOWED, allowExecute: true } }],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
      providers: [DeskSkills],
    }).compile();
    await app.init();
  }

  const run = (journal?: RunJournal): Promise<AgentRunResult> =>
    app
      .get(AgentRegistry)
      .get('desk')
      .run('Buy 10 ACME and hedge', { ...CONTEXT, ...(journal ? { journal } : {}) });

  beforeEach(async () => {
    Object.assign(calls, { quote: 0, place: 0, keyed: 0, note: 0 });
    pins.length = 0;
    await boot();
  });
  afterEach(async () => {
    await app.close();
  });

  /** A whole run's journal, written by a run from none. */
  async function fullJournal(): Promise<{ entries: RunJournalEntry[]; result: AgentRunResult; writes: number }> {
    const journal = journalOf([]);
    const result = await run(journal);
    return { entries: journal.written, result, writes: journal.writes };
  }

  it('writes each model turn and tool call, in order, before the run goes on: an intent before each call that is not a read', async () => {
    const { entries, result, writes } = await fullJournal();
    expect(result.stoppedReason).toBe('final');
    expect(entries.map((e) => [e.seq, e.kind, e.step, 'call' in e ? e.call : null])).toEqual([
      [0, 'turn', 0, null],
      [1, 'call', 0, 0],
      [2, 'intent', 0, 1],
      [3, 'call', 0, 1],
      [4, 'turn', 1, null],
      [5, 'intent', 1, 0],
      [6, 'call', 1, 0],
      [7, 'intent', 1, 1],
      [8, 'call', 1, 1],
      [9, 'turn', 2, null],
    ]);
    expect(model.asked).toBe(3);
    expect(calls).toEqual({ quote: 1, place: 1, keyed: 1, note: 1 });
    // The quote's outcome (a read's) went with the next write, the intent of order.place: 9 writes for 10 entries.
    expect(writes).toBe(9);
    const first = entries[0] as Extract<RunJournalEntry, { kind: 'turn' }>;
    expect(first.requestDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.turn.toolCalls.map((c) => c.name)).toEqual(['market.quote', 'order.place']);
    // What a skill's audit digests, the journal digests too: no copy of the note outlives its store.
    const text = JSON.stringify(entries);
    expect(text).not.toContain('the secret plan');
    // An x-sensitive argument is masked in the journal too, in the model's call as in the call's record.
    expect(text).not.toContain('8642-sensitive');
    // A secret the model wrote in its text is not kept either (the journal keeps the text as callers read it).
    expect(text).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz1234567890');
    expect(first.turn.text).toBe('Using key [redacted] to place it.');
    expect(text).toContain('"digest":true');
  });

  it('replays a whole journal: no model turn asked, no skill run again, the same result', async () => {
    const { entries, result } = await fullJournal();
    await app.close();
    Object.assign(calls, { quote: 0, place: 0, keyed: 0, note: 0 });
    await boot();
    const journal = journalOf(entries);
    const again = await run(journal);
    expect(model.asked).toBe(0);
    expect(calls).toEqual({ quote: 0, place: 0, keyed: 0, note: 0 });
    expect(journal.written).toEqual([]);
    expect(again.answer).toBe(result.answer);
    expect(again.stoppedReason).toBe('final');
    expect(again.steps.map((s) => s.toolCalls.map((c) => [c.name, c.ok]))).toEqual(
      result.steps.map((s) => s.toolCalls.map((c) => [c.name, c.ok])),
    );
    expect(again.metrics.steps).toBe(result.metrics.steps);
  });

  it('after a crash at any place, asks only the turns not answered, repeats only what had no effect or is keyed, never the rest', async () => {
    const { entries } = await fullJournal();
    for (let cut = 0; cut <= entries.length; cut++) {
      await app.close();
      Object.assign(calls, { quote: 0, place: 0, keyed: 0, note: 0 });
      pins.length = 0;
      await boot();
      const prefix = entries.slice(0, cut);
      const journal = journalOf(prefix);
      const result = await run(journal);
      const has = (kind: string, step: number, call?: number) =>
        prefix.some((e) => e.kind === kind && e.step === step && (call === undefined || ('call' in e && e.call === call)));
      const at = `cut after ${cut} entries`;
      expect([at, result.stoppedReason]).toEqual([at, 'final']);
      expect([at, model.asked]).toEqual([at, 3 - prefix.filter((e) => e.kind === 'turn').length]);
      // A read with no outcome written is asked again (it had no effect).
      expect([at, calls.quote]).toEqual([at, has('call', 0, 0) ? 0 : 1]);
      // order.place is not idempotent: run only when no attempt had begun it; begun without an outcome, never again.
      // Its pin is x-sensitive, so a replayed turn holds it masked: a call of that turn not begun is not run with it.
      expect([at, calls.place]).toEqual([at, has('turn', 0) ? 0 : 1]);
      expect([at, pins.filter((p) => p !== '8642-sensitive')]).toEqual([at, []]);
      const place = result.steps[0].toolCalls[1];
      const code = (o: string) => (JSON.parse(o) as { error?: { code?: string } }).error?.code;
      if (has('call', 0, 1) || !has('turn', 0)) expect([at, place.ok]).toEqual([at, true]);
      else if (has('intent', 0, 1)) expect([at, code(place.observation)]).toEqual([at, 'outcome_unknown']);
      else expect([at, code(place.observation)]).toEqual([at, 'arguments_not_kept']);
      // order.keyed says a repeat has no further effect: run again when its outcome was not written.
      expect([at, calls.keyed]).toEqual([at, has('call', 1, 0) ? 0 : 1]);
      // The journal goes on where the crash left it: one entry at each place, no gap, nothing written twice.
      const all = [...prefix, ...journal.written];
      expect([at, all.map((e) => e.seq)]).toEqual([at, all.map((_, i) => i)]);
      expect([at, all.filter((e) => e.kind === 'turn').length]).toEqual([at, 3]);
    }
  });

  it('stops the run, running nothing more, when the journal says the run was taken over (the claim was lost)', async () => {
    let writes = 0;
    const journal = journalOf([], async () => ++writes < 2);
    const result = await run(journal);
    expect(result.stoppedReason).toBe('aborted');
    expect(result.error).toMatch(/taken over by another instance/);
    // The turn was written; the quote's outcome went with the intent of order.place, which was refused: it never ran.
    expect(journal.written.map((e) => e.kind)).toEqual(['turn']);
    expect(calls).toEqual({ quote: 1, place: 0, keyed: 0, note: 0 });
    expect(model.asked).toBe(1);
  });

  it('stops the run when the journal cannot be written, before the next step', async () => {
    const journal = journalOf([], async () => {
      throw new Error('disk full');
    });
    const result = await run(journal);
    expect(result.stoppedReason).toBe('aborted');
    expect(result.error).toMatch(/journal could not be written: disk full/);
    expect(calls).toEqual({ quote: 0, place: 0, keyed: 0, note: 0 });
    expect(model.asked).toBe(1);
  });

  it("refuses a journal that does not match the run (another agent's, or the agent changed): nothing is asked or run", async () => {
    const { entries } = await fullJournal();
    Object.assign(calls, { quote: 0, place: 0, keyed: 0, note: 0 });
    const askedBefore = model.asked;
    // The calls first: where the run expects its first model turn.
    const result = await run(journalOf([entries[1], entries[0]]));
    expect(result.stoppedReason).toBe('aborted');
    expect(result.error).toMatch(/journal does not match the run.*expected model turn 0, found call at step 0/);
    expect(model.asked).toBe(askedBefore);
    expect(calls).toEqual({ quote: 0, place: 0, keyed: 0, note: 0 });
  });

  it('without a journal, writes and replays nothing (a run outside the worker)', async () => {
    const result = await run();
    expect(result.stoppedReason).toBe('final');
    expect(model.asked).toBe(3);
    expect(calls).toEqual({ quote: 1, place: 1, keyed: 1, note: 1 });
  });
});
