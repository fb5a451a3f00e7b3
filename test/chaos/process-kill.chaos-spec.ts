import { Client } from 'pg';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { ChatRequest, conversation, FakeTurn } from '../support/openai-protocol-server';
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

/**
 * Background runs per agent (the sample's worker has 4 slots: all of them run at once): the even one is killed after its
 * write committed, the odd one before any write.
 */
const RUNS = 2;
/** Proposals approved while their execution is held up, then killed. */
const APPROVALS = 3;

/**
 * The chaos suite: the sample server (a real process, on a PostgreSQL server of its own, its agents on a local model
 * server the test plays) killed with SIGKILL in the middle of work that writes, then started again on the same database:
 * (a) background runs of the desk (approval.submit, a small order executed at once) killed after or before their write;
 * (b) approved proposals whose execution is held up (the test locks sample_orders) when the process dies;
 * (c) ops runs (command.execute order.cancel, through the outbox) killed after the command committed, before the relay.
 * After the restart, with nothing done by hand: every run succeeded, each order was written once, each approved
 * proposal executed once, each cancellation happened once and its event was delivered, and the server is ready.
 */
describe('chaos: the sample process killed with SIGKILL mid-work, then restarted', () => {
  let sample: SampleProcess | undefined;
  let locker: Client | undefined;
  /** Before the kill, the turns a goal names are held (never answered); after it, every turn is answered. */
  let holding = true;
  const held: string[] = [];
  /** The turns answered before the kill, and the requests made after it for one of them (the journal must make none). */
  const answered = new Set<string>();
  const askedAgain: string[] = [];

  /** The model, counting: a turn answered before the kill is never asked again after it (the run journal replays it). */
  function play(request: ChatRequest): FakeTurn | Promise<FakeTurn> {
    const { goal, turn } = conversation(request);
    const key = `${goal} #${turn}`;
    if (!holding && answered.has(key)) askedAgain.push(key);
    const answer = scripted(request);
    if (holding && !(answer instanceof Promise)) answered.add(key);
    return answer;
  }

  /** The model: goals `desk <i>`, `ops <j> <orderId>`, `draft <k>`, `propose <k>`. */
  function scripted(request: ChatRequest): FakeTurn | Promise<FakeTurn> {
    const { goal, turn } = conversation(request);
    const [kind, n, orderId] = goal.split(' ');
    const i = Number(n);
    // Even runs: held after their first tool call (it has committed); odd runs: held at their first turn.
    const holdAt = i % 2 === 0 ? 1 : 0;
    if (holding && (kind === 'desk' || kind === 'ops') && turn === holdAt) {
      held.push(goal);
      return new Promise<FakeTurn>(() => undefined);
    }
    if (turn > 0) return { text: `done: ${goal}` };
    switch (kind) {
      case 'desk':
        return proposeOrder('ACME', 11 + i, 101.25);
      case 'ops':
        return {
          toolCalls: [{ name: 'command.execute', arguments: { command: 'order.cancel', args: { orderId, reason: 'chaos' } } }],
        };
      case 'draft':
        return { toolCalls: [{ name: 'order.draft', arguments: { symbol: 'ACME', side: 'buy', qty: 300 + i, limitPrice: 101.25 } }] };
      case 'propose':
        return proposeOrder('GLOBEX', 500 + i, 48.1);
      default:
        return { text: `unknown goal ${goal}` };
    }
  }

  const cluster = chaosClusterForSuite(play, {
    beforeStop: async () => {
      await killHard(sample);
      await locker?.end().catch(() => undefined);
    },
  });
  const env = () => sampleEnv(cluster.pg, cluster.model.url);
  const q = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => rows<T>(cluster.pg, sql, params);
  const count = async (sql: string, params: unknown[] = []) => Number((await q<{ n: string }>(sql, params))[0].n);

  it('every run, approval and event ends once, nothing lost, nothing twice, and the restarted server serves', async () => {
    const alice = mintToken(SECRET, { tenant: 'acme', user: 'alice' });
    const desk = mintToken(SECRET, { tenant: 'acme', user: 'dana' });
    const ops = mintToken(SECRET, { tenant: 'acme', user: 'otto' });
    const lead = mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] });
    sample = await startSample(env());

    // Orders for ops to cancel, and proposals waiting for a desk lead (synchronous runs, before any fault).
    for (let k = 0; k < RUNS; k++)
      expect((await call(sample, 'POST', '/agents/trader/runs', alice, { goal: `draft ${k}` })).status).toBe(200);
    for (let k = 0; k < APPROVALS; k++)
      expect((await call(sample, 'POST', '/agents/trader/runs', alice, { goal: `propose ${k}` })).status).toBe(200);
    const drafts = await q<{ id: string; qty: number }>(`SELECT id, qty FROM sample_orders WHERE qty >= 300 AND qty < 400 ORDER BY qty`);
    expect(drafts.map((d) => d.qty)).toEqual(Array.from({ length: RUNS }, (_, k) => 300 + k));
    const proposals = await q<{ id: string }>(
      `SELECT id FROM zmodu_proposals WHERE status = 'pending' AND (payload->>'qty')::int >= 500 ORDER BY (payload->>'qty')::int`,
    );
    expect(proposals).toHaveLength(APPROVALS);

    // (a) and (c): background runs, held by the model after (even) or before (odd) their write.
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const d = await call(sample, 'POST', '/agents/desk/goals', desk, { goal: `desk ${i}` });
      const o = await call(sample, 'POST', '/agents/ops/goals', ops, { goal: `ops ${i} ${drafts[i].id}` });
      expect([d.status, o.status]).toEqual([202, 202]);
      runIds.push(String(d.body.runId), String(o.body.runId));
    }
    await eventually(async () => (held.length === 2 * RUNS ? true : undefined), 30_000, 'every run to reach its held turn');

    // (b): the desk lead approves while sample_orders is locked: each decision commits, its execution waits on the lock.
    locker = new Client({ connectionString: cluster.pg.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE sample_orders IN SHARE MODE');
    const approvals = proposals.map(({ id }) =>
      call(sample as SampleProcess, 'POST', `/admin/approvals/${id}/approve`, lead, { reason: 'chaos', version: 1, step: 0 }).catch(
        () => null,
      ),
    );
    await eventually(
      async () => ((await count(`SELECT count(*) AS n FROM zmodu_proposals WHERE status = 'approved'`)) === APPROVALS ? true : undefined),
      20_000,
      'the approvals to commit',
    );
    await eventually(
      async () =>
        (await count(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%sample_orders%'`)) ===
        APPROVALS
          ? true
          : undefined,
      20_000,
      'the executions to wait on the lock',
    );

    // The fault.
    await killHard(sample);
    await Promise.all(approvals);
    const before = {
      running: await count(`SELECT count(*) AS n FROM zmodu_agent_runs WHERE status = 'running'`),
      approved: await count(`SELECT count(*) AS n FROM zmodu_proposals WHERE status = 'approved'`),
      deskOrders: await count(`SELECT count(*) AS n FROM sample_orders WHERE qty BETWEEN 11 AND 20`),
      cancelled: await count(`SELECT count(*) AS n FROM sample_orders WHERE status = 'cancelled'`),
    };
    const executedBeforeKill = (await q<{ id: string }>(`SELECT id FROM zmodu_proposals WHERE status = 'executed'`)).map((p) => p.id);
    // Killed mid-work: every background run was running, every approval decided and not executed, the even runs' writes done.
    expect(before).toEqual({ running: 2 * RUNS, approved: APPROVALS, deskOrders: RUNS / 2, cancelled: RUNS / 2 });
    expect(executedBeforeKill).toHaveLength(RUNS / 2);
    await locker.query('COMMIT');
    await locker.end();
    locker = undefined;
    // The dead process's connections end once the server notices (the held executions roll back, their commit never came).
    await eventually(
      async () =>
        (await count(`SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`)) === 1 ? true : undefined,
      20_000,
      'the dead process to leave the server',
    );
    const firstLife = sample.log();

    // The restart: same database, nothing done by hand.
    holding = false;
    sample = await startSample(env());
    expect(await ready(sample)).toBe(200);
    const runs = await eventually(
      async () => {
        const rows = await q<{ id: string; status: string; attempts: number; agent: string }>(
          `SELECT id, status, attempts, agent FROM zmodu_agent_runs WHERE id = ANY ($1)`,
          [runIds],
        );
        return rows.every((r) => r.status === 'succeeded' || r.status === 'failed') ? rows : undefined;
      },
      6 * LEASE_MS + 10_000,
      'every run to end',
    );
    // (a) No model turn answered before the kill was asked again: the runs replayed them from their journal (the turn
    // in flight, which had no answer, was asked again).
    expect(askedAgain).toEqual([]);
    expect([...answered].filter((k) => /^(desk|ops) /.test(k)).sort()).toEqual(
      Array.from({ length: RUNS }, (_, i) => (i % 2 === 0 ? [`desk ${i} #0`, `ops ${i} ${drafts[i].id} #0`] : []))
        .flat()
        .sort(),
    );
    // (a) Every run ended succeeded, on its second start.
    expect(runs.map((r) => [r.agent, r.status, r.attempts]).sort()).toEqual(
      [...Array(RUNS).fill(['desk', 'succeeded', 2]), ...Array(RUNS).fill(['ops', 'succeeded', 2])].sort(),
    );
    // (a) Each desk order written once, by one proposal, executed.
    const deskOrders = await q<{ qty: number; n: string }>(
      `SELECT qty, count(*) AS n FROM sample_orders WHERE qty BETWEEN 11 AND 20 GROUP BY qty ORDER BY qty`,
    );
    expect(deskOrders.map((r) => [r.qty, Number(r.n)])).toEqual(Array.from({ length: RUNS }, (_, i) => [11 + i, 1]));
    const deskProposals = await q<{ qty: number; status: string }>(
      `SELECT (payload->>'qty')::int AS qty, status FROM zmodu_proposals WHERE (payload->>'qty')::int BETWEEN 11 AND 20 ORDER BY 1`,
    );
    expect(deskProposals.map((r) => [r.qty, r.status])).toEqual(Array.from({ length: RUNS }, (_, i) => [11 + i, 'executed']));

    // (b) Recovery at start executed each approved proposal, once.
    for (const [k, { id }] of proposals.entries()) {
      const [p] = await q<{ status: string }>(`SELECT status FROM zmodu_proposals WHERE id = $1`, [id]);
      const orders = await count(`SELECT count(*) AS n FROM sample_orders WHERE qty = $1 AND symbol = 'GLOBEX'`, [500 + k]);
      expect([id, p.status, orders]).toEqual([id, 'executed', 1]);
    }

    // Audit: every execution has exactly one entry, also the one executed just before the SIGKILL: a staged execution's
    // entry is written in its own transaction (an intent), which the restarted process chains (wait for that flush).
    const executed = await q<{ id: string }>(`SELECT id FROM zmodu_proposals WHERE status = 'executed'`);
    expect(executed).toHaveLength(RUNS / 2 + APPROVALS + executedBeforeKill.length);
    const audit = async () =>
      new Map(
        (
          await q<{ proposal_id: string; n: string }>(
            `SELECT proposal_id, count(*) AS n FROM zmodu_audit_log WHERE skill = 'order.submit' AND outcome = 'ok' GROUP BY proposal_id`,
          )
        ).map((a) => [a.proposal_id, Number(a.n)]),
      );
    const audited = await eventually(
      async () => {
        const found = await audit();
        return executed.every((e) => found.has(e.id)) ? found : undefined;
      },
      10_000,
      'the audit entries of every execution',
    );
    expect(executed.map((e) => [e.id, audited.get(e.id)])).toEqual(executed.map((e) => [e.id, 1]));
    expect(executedBeforeKill.length).toBeGreaterThan(0);

    // (c) Each order cancelled once, by one command whose one event was delivered (at least once: the relay's promise).
    const events = await eventually(
      async () => {
        const rows = await q<{ id: string; order_id: string; status: string; attempts: number }>(
          `SELECT id, payload->>'orderId' AS order_id, status, attempts FROM zmodu_outbox WHERE topic = 'order.cancelled'`,
        );
        return rows.length === RUNS && rows.every((r) => r.status === 'delivered') ? rows : undefined;
      },
      45_000,
      'every order.cancelled event to be delivered',
    );
    expect(events.map((e) => e.order_id).sort()).toEqual(drafts.map((d) => d.id).sort());
    expect(await count(`SELECT count(*) AS n FROM sample_orders WHERE qty >= 300 AND qty < 400 AND status = 'cancelled'`)).toBe(RUNS);
    const logs = firstLife + sample.log();
    for (const e of events) {
      const deliveries = logs.split(`(event ${e.id})`).length - 1;
      expect([e.id, deliveries >= 1, deliveries <= e.attempts]).toEqual([e.id, true, true]);
    }
    expect(await ready(sample)).toBe(200);
  }, 240_000);
});
