import { DataSource } from 'typeorm';
import { TypeOrmAgentRunStore } from '@zmodu/agent/internal';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { ChatRequest, conversation, FakeTurn } from '../support/openai-protocol-server';
import {
  call,
  CHAOS_SECRET as SECRET,
  chaosClusterForSuite,
  eventually,
  pauseServer,
  proposeOrder,
  ready,
  resumeServer,
  rowsOnce,
  SampleProcess,
  sampleEnv,
  sleep,
  startSample,
} from '../support/sample-process';

/** The lease of this spec (the sample's heartbeat is a third of it); the outage lasts twice as long. */
const LEASE_MS = 6000;
const HEARTBEAT_MS = LEASE_MS / 3;
const OUTAGE_MS = 2 * LEASE_MS;
/** Goals of the first instance (its 4 slots, all busy) and of the second (which then runs them: the first has no slot). */
const ON_A = 4;
const ON_B = 3;

/**
 * The chaos suite: an outage of PostgreSQL longer than `leaseMs` while runs finish on two instances in cluster mode.
 * Each goal `outage <i>` proposes a small order (executed at once: a sample_orders row), then waits on the model; the
 * server is stopped, the model answers every held turn (the runs end while the database is away: their outcomes cannot
 * be stored), and the server comes back after two leases. Each instance keeps its runs and stores their outcomes once
 * the database answers. Before, the first recovery sweep of either instance took the other's lapsed leases back and ran
 * those goals a second time (3 goals ran twice to completion: model turns and tools). Which instance reaches the
 * database first after it returns is a race; the spec makes it certain that a recovery comes first: the sweep of a
 * third instance (the run store of @zmodu/agent in this process, the sample's clock) the moment the server answers.
 * Now: every run succeeded on its first attempt, each model turn was played once, and each order was written once.
 */
describe('chaos: an outage longer than leaseMs while runs finish on two instances in cluster mode', () => {
  /** Model requests per goal and turn (`outage 3#1`: the second turn of goal 3). */
  const turns = new Map<string, number>();
  const held: (() => void)[] = [];

  function play(request: ChatRequest): FakeTurn | Promise<FakeTurn> {
    const { goal, turn } = conversation(request);
    const key = `${goal}#${turn}`;
    turns.set(key, (turns.get(key) ?? 0) + 1);
    const i = Number(goal.split(' ')[1]);
    if (turn === 0) return proposeOrder('ACME', 51 + i, 101.25);
    // The run's last turn: held until the test lets it answer (during the outage); a retried run's answers at once.
    if (turns.get(key) === 1) return new Promise<FakeTurn>((resolve) => held.push(() => resolve({ text: `done: ${goal}` })));
    return { text: `done again: ${goal}` };
  }

  const cluster = chaosClusterForSuite(play, { beforeStop: () => held.splice(0).forEach((release) => release()) });

  it('every run ends once, on its first attempt: each turn played once and each order written once', async () => {
    const { samples } = cluster;
    const env = sampleEnv(cluster.pg, cluster.model.url, { ZMODU_QUEUE: 'pg-boss', ZMODU_WORKER_LEASE_MS: String(LEASE_MS) });
    const dana = mintToken(SECRET, { tenant: 'acme', user: 'dana' });
    const post = async (sample: SampleProcess, i: number) => {
      const res = await call(sample, 'POST', '/agents/desk/goals', dana, { goal: `outage ${i}` });
      expect(res.status).toBe(202);
      return String(res.body.runId);
    };
    const runIds: string[] = [];
    samples.push(await startSample(env));
    for (let i = 0; i < ON_A; i++) runIds.push(await post(samples[0], i));
    await eventually(async () => (held.length === ON_A ? true : undefined), 60_000, 'the first instance’s runs to hold');
    samples.push(await startSample(env));
    for (let i = ON_A; i < ON_A + ON_B; i++) runIds.push(await post(samples[1], i));
    await eventually(async () => (held.length === runIds.length ? true : undefined), 60_000, 'every run to hold');
    const owners = await rowsOnce<{ owner: string }>(
      cluster.pg.url,
      `SELECT DISTINCT lease_owner AS owner FROM zmodu_agent_runs WHERE id = ANY ($1) AND status = 'running'`,
      [runIds],
    );
    expect(owners).toHaveLength(2); // runs on both instances
    const orders = async () =>
      (
        await rowsOnce<{ qty: number; n: string }>(
          cluster.pg.url,
          `SELECT qty, count(*) AS n FROM sample_orders WHERE qty BETWEEN 51 AND 60 GROUP BY qty ORDER BY qty`,
        )
      ).map((r) => [r.qty, Number(r.n)]);
    expect(await orders()).toEqual(runIds.map((_, i) => [51 + i, 1]));

    // The fault: the database goes away, the runs end meanwhile, it comes back after two leases.
    await pauseServer(cluster.pg);
    for (const release of held.splice(0)) release();
    await sleep(OUTAGE_MS);
    cluster.pg = await resumeServer(cluster.pg);
    const third = await new DataSource({ type: 'postgres', url: cluster.pg.url }).initialize();
    const swept = await new TypeOrmAgentRunStore(third)
      .recoverable(500, { outageMs: LEASE_MS - HEARTBEAT_MS, graceMs: LEASE_MS })
      .finally(() => third.destroy());

    const runs = await eventually(
      async () => {
        const rows = await rowsOnce<{ goal: string; status: string; attempts: number }>(
          cluster.pg.url,
          `SELECT goal, status, attempts FROM zmodu_agent_runs WHERE id = ANY ($1) ORDER BY goal`,
          [runIds],
        );
        return rows.every((r) => r.status === 'succeeded' || r.status === 'failed') ? rows : undefined;
      },
      6 * LEASE_MS + 30_000,
      'every run to end after the outage',
    );
    expect(runs.map((r) => [r.goal, r.status, r.attempts])).toEqual(runIds.map((_, i) => [`outage ${i}`, 'succeeded', 1]));
    expect([...turns].filter(([, n]) => n !== 1)).toEqual([]);
    expect(turns.size).toBe(2 * runIds.length);
    expect(await orders()).toEqual(runIds.map((_, i) => [51 + i, 1]));
    for (const sample of samples) expect(await ready(sample)).toBe(200);
    expect(swept.interrupted).toEqual([]); // every lease lapsed in the outage: their owners had the grace
  }, 300_000);
});
