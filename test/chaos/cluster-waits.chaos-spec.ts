import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { readEvents } from '../support/event-stream';
import { ChatRequest, conversation, FakeTurn, OpenAIProtocolServer } from '../support/openai-protocol-server';
import {
  call,
  CHAOS_LEASE_MS as LEASE_MS,
  CHAOS_SECRET as SECRET,
  chaosClusterForSuite,
  eventually,
  killHard,
  proposeOrder,
  ready,
  rows,
  SampleProcess,
  sampleEnv,
  startSample,
} from '../support/sample-process';

/** Goals per phase: each proposes an order over the desk's human threshold, so its run waits for a desk lead. */
const GOALS = 3;
const QTY = (i: number) => 201 + i; // at 101.25, 20,351 and up: a human approves (below the second approver's 100,000)

/**
 * The chaos suite: runs that wait for a human, in cluster mode (ZMODU_QUEUE=pg-boss, one PostgreSQL of the test's own),
 * with instances killed by SIGKILL while runs wait and while they resume. Each goal `desk <i>` proposes a large order
 * (turn 0), waits for a desk lead's approval (the order executes then, a sample_orders row), and answers with the
 * decision it was told (turn 1). The model servers count the turns they answered: every answered turn is asked once
 * in all, whichever instance asks it (the journal replays it), and every order is written once.
 *
 * Phase 1, killed during the wait: the runs wait, their instance dies, the decisions are made on the other, which
 * resumes them. Phase 2, killed during the resume: the runs wait, the other instance dies, the decisions are made on
 * the one left, which resumes them and holds their turn 1 in flight when it dies; a third instance takes them over
 * once their leases lapse, replays turn 0 from the journal and asks turn 1 (the one step in flight, which had no
 * effect) again.
 */
describe('chaos: runs that wait for a human, two instances in cluster mode, one killed during the wait and one during the resume', () => {
  /** `${goal} ${turn}` → how many times a model server answered that turn. */
  const answered = new Map<string, number>();
  /** Goals whose turn 1 the holding instance's model received and never answers. */
  const held = new Set<string>();
  let holdResumes = false;

  const count = (goal: string, turn: number) => answered.set(`${goal} ${turn}`, (answered.get(`${goal} ${turn}`) ?? 0) + 1);
  const play =
    (mayHold: boolean) =>
    (request: ChatRequest): FakeTurn | Promise<FakeTurn> => {
      const { goal, turn } = conversation(request);
      const i = Number(goal.split(' ')[1]);
      if (turn === 0) {
        count(goal, 0);
        return proposeOrder('ACME', QTY(i), 101.25);
      }
      if (mayHold && holdResumes) {
        held.add(goal);
        return new Promise<FakeTurn>(() => undefined);
      }
      count(goal, turn);
      const told = [...request.body.messages].reverse().find((m) => m.role === 'tool');
      const decision = (JSON.parse(String(told?.content ?? '{}')) as { decision?: string }).decision;
      return { text: `done: ${goal}: ${decision}` };
    };

  // The first model server's instances may hold their resumed turns (phase 2); the second's never do.
  const cluster = chaosClusterForSuite([play(true), play(false)], { beforeStop: () => void (holdResumes = false) });
  const env = (model: OpenAIProtocolServer) => sampleEnv(cluster.pg, model.url, { ZMODU_QUEUE: 'pg-boss' });
  const q = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => rows<T>(cluster.pg, sql, params);
  const dana = mintToken(SECRET, { tenant: 'acme', user: 'dana' });
  const lead = mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] });

  const start = async (model: OpenAIProtocolServer): Promise<SampleProcess> => {
    const sample = await startSample(env(model));
    cluster.samples.push(sample);
    return sample;
  };
  const post = async (sample: SampleProcess, i: number): Promise<string> => {
    const res = await call(sample, 'POST', '/agents/desk/goals', dana, { goal: `desk ${i}` });
    expect(res.status).toBe(202);
    return String(res.body.runId);
  };
  const runsOf = (ids: string[]) =>
    q<{ id: string; status: string; waiting_for: string[] | null; goal: string; answer: string | null }>(
      `SELECT id, status, waiting_for, goal, answer FROM zmodu_agent_runs WHERE id = ANY ($1) ORDER BY goal`,
      [ids],
    );
  const allWaiting = (ids: string[]) =>
    eventually(
      async () => {
        const runs = await runsOf(ids);
        return runs.length === ids.length && runs.every((r) => r.status === 'waiting') ? runs : undefined;
      },
      60_000,
      'the runs to wait for a human',
    );
  const approve = async (sample: SampleProcess, proposalId: string) => {
    const p = await call(sample, 'GET', `/admin/approvals/${proposalId}`, lead);
    expect(p.status).toBe(200);
    const step = (p.body.waitingStep as { index: number }).index;
    const res = await call(sample, 'POST', `/admin/approvals/${proposalId}/approve`, lead, {
      version: p.body.version,
      step,
      reason: 'fine',
    });
    expect([res.status, res.body.verdict]).toEqual([200, 'executed']);
  };
  const allEnded = (ids: string[], ms: number) =>
    eventually(
      async () => {
        const runs = await runsOf(ids);
        return runs.every((r) => r.status === 'succeeded' || r.status === 'failed') ? runs : undefined;
      },
      ms,
      'the resumed runs to end',
    );
  /** Each goal of `range`: its run succeeded with the execution it was told; each turn answered once; one order each. */
  const onceEach = async (ids: string[], range: number[]) => {
    const runs = await runsOf(ids);
    expect(runs.map((r) => [r.goal, r.status, r.answer])).toEqual(
      range.map((i) => [`desk ${i}`, 'succeeded', `done: desk ${i}: executed`]),
    );
    for (const i of range) expect([i, answered.get(`desk ${i} 0`), answered.get(`desk ${i} 1`)]).toEqual([i, 1, 1]);
    const orders = await q<{ qty: number; n: string }>(
      `SELECT qty, count(*) AS n FROM sample_orders WHERE qty = ANY ($1) GROUP BY qty ORDER BY qty`,
      [range.map(QTY)],
    );
    expect(orders.map((r) => [r.qty, Number(r.n)])).toEqual(range.map((i) => [QTY(i), 1]));
    const proposals = await q<{ qty: number; status: string }>(
      `SELECT (payload->>'qty')::int AS qty, status FROM zmodu_proposals WHERE (payload->>'qty')::int = ANY ($1) ORDER BY 1`,
      [range.map(QTY)],
    );
    expect(proposals.map((r) => [r.qty, r.status])).toEqual(range.map((i) => [QTY(i), 'executed']));
  };

  it('every run goes on once after its decision, each answered turn asked once and each order written once', async () => {
    const [holding, steady] = cluster.models;
    const phase1 = [0, 1, 2].slice(0, GOALS);
    const phase2 = phase1.map((i) => i + GOALS);

    // Phase 1: the runs wait on the first instance (alone: it runs the migrations and every turn 0), which then dies.
    const first = await start(holding);
    const ids1: string[] = [];
    for (const i of phase1) ids1.push(await post(first, i));
    const waiting1 = await allWaiting(ids1);
    const second = await start(steady);
    await killHard(first);
    // The decisions are made on the second instance, which resumes the runs (a waiting run holds no lease to lapse).
    for (const run of waiting1) await approve(second, (run.waiting_for as string[])[0]);
    await allEnded(ids1, 60_000);
    await onceEach(ids1, phase1);

    // Phase 2: a third instance holds the resumed turns. The runs wait (turn 0 on either instance), the second dies.
    holdResumes = true;
    const third = await start(holding);
    const ids2: string[] = [];
    for (const i of phase2) ids2.push(await post(third, i));
    const waiting2 = await allWaiting(ids2);
    await killHard(second);
    // Decided on the third, the only one left: it resumes them all, and holds their turn 1 in flight.
    for (const run of waiting2) await approve(third, (run.waiting_for as string[])[0]);
    await eventually(async () => (held.size === GOALS ? true : undefined), 60_000, 'the third instance to hold every resumed turn');
    const fourth = await start(steady);
    await killHard(third);
    // The fourth takes the runs over once their leases lapse: turn 0 and the decision replayed, turn 1 asked again.
    await allEnded(ids2, 10 * LEASE_MS + 60_000);
    await onceEach(ids2, phase2);
    // Turn 1 reached the third instance's model once per run, never answered: the only step asked twice, with no effect.
    expect([...held].sort()).toEqual(phase2.map((i) => `desk ${i}`));
    const journal = await q<{ kinds: string[] }>(
      `SELECT array_agg(entry::jsonb->>'kind' ORDER BY seq) AS kinds FROM zmodu_agent_run_journal WHERE run_id = ANY ($1) GROUP BY run_id`,
      [ids2],
    );
    for (const { kinds } of journal) expect(kinds).toEqual(['turn', 'intent', 'wait', 'decision', 'turn']);
    // A client that followed a run on an instance that died reconnects to another with Last-Event-ID (the wait's seq):
    // it goes on from there, the journal being the run's event log in the database.
    const followed = await readEvents(
      `http://127.0.0.1:${fourth.port}/agents/runs/${ids2[0]}/events`,
      { authorization: `Bearer ${dana}`, 'last-event-id': '2' },
      (e) => e.event === 'final',
    );
    expect(followed.events.map((e) => [e.event, e.id])).toEqual([
      ['decision', '3'],
      ['turn', '4'],
      ['final', undefined],
    ]);
    expect(followed.events[2].data).toMatchObject({ id: ids2[0], status: 'succeeded', answer: 'done: desk 3: executed' });
    expect(await ready(fourth)).toBe(200);
  }, 300_000);
});
