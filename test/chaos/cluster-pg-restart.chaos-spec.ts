import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { ChatRequest, conversation, FakeTurn } from '../support/openai-protocol-server';
import {
  call,
  CHAOS_SECRET as SECRET,
  chaosClusterForSuite,
  eventually,
  OwnServer,
  pauseServer,
  ready,
  resumeServer,
  rowsOnce,
  sampleEnv,
  sleep,
  startOwnServer,
  startSample,
  stopServer,
} from '../support/sample-process';

/** Instances of the sample in cluster mode. */
const INSTANCES = 3;
/**
 * The lease of this spec: well beyond a restart (a run's lease never lapses while the server restarts, so every goal
 * is claimed once and a retry would be a bug, not the lease doing its work).
 */
const LEASE_MS = 8000;
/** Goals posted per second across the instances while the server restarts (the slots complete jobs all the while). */
const POSTS_PER_SECOND = 20;

/**
 * The chaos suite: PostgreSQL restarted under cluster mode (ZMODU_QUEUE=pg-boss). Three instances of the sample, as
 * child processes, take a steady flow of goals (the desk's, answered at once by the model) while the server is
 * restarted twice: a fast shutdown (every session terminated with 57P01, "terminating connection due to administrator
 * command") and an immediate one (sessions killed, crash recovery at the start). pg-boss 10's `work` loop completed and
 * failed its jobs without awaiting them: a job whose completion met the lost connection was an unhandled rejection, and
 * Node ended the instance (1 of 3 instances died in one restart); the slots are pg-boss 12's `work` now, which awaits
 * them. Afterwards: no instance exited, each is ready again without a restart of its own, every goal accepted (202) ran
 * exactly once (one model request) and succeeded. The RESTART line reports how long each restart took to heal and what
 * each instance's unhandled-rejection net contained.
 */
describe('chaos: PostgreSQL restarted (fast and immediate shutdown) under three instances in cluster mode', () => {
  /** Model requests per goal. */
  const requests = new Map<string, number>();

  function play(request: ChatRequest): FakeTurn {
    const { goal } = conversation(request);
    requests.set(goal, (requests.get(goal) ?? 0) + 1);
    return { text: `done: ${goal}` };
  }

  // Durable: with the suites' synchronous_commit=off, an immediate shutdown loses commits already acknowledged.
  const cluster = chaosClusterForSuite(play, { durable: true });

  it('no instance exits, each is ready again by itself, and every accepted goal ran exactly once', async () => {
    const { samples } = cluster;
    const env = sampleEnv(cluster.pg, cluster.model.url, { ZMODU_QUEUE: 'pg-boss', ZMODU_WORKER_LEASE_MS: String(LEASE_MS) });
    samples.push(await startSample(env)); // alone first: it runs the migrations
    samples.push(...(await Promise.all(Array.from({ length: INSTANCES - 1 }, () => startSample(env)))));
    const dana = mintToken(SECRET, { tenant: 'acme', user: 'dana' });

    // The flow: one goal every 1000 / POSTS_PER_SECOND ms, round robin, until stopped; 202s are the accepted goals.
    const accepted = new Map<string, string>();
    const answers = new Map<number, number>();
    let flowing = true;
    let posted = 0;
    const flow = (async () => {
      const inFlight = new Set<Promise<void>>();
      while (flowing) {
        const i = posted++;
        const goal = `restart goal ${i}`;
        const sample = samples[i % samples.length];
        const one = call(sample, 'POST', '/agents/desk/goals', dana, { goal })
          .then((res) => {
            answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
            if (res.status === 202) accepted.set(goal, String(res.body.runId));
          })
          .catch(() => void answers.set(0, (answers.get(0) ?? 0) + 1))
          .finally(() => inFlight.delete(one));
        inFlight.add(one);
        await sleep(1000 / POSTS_PER_SECOND);
      }
      await Promise.allSettled([...inFlight]);
    })();

    const exits: string[] = [];
    samples.forEach((s, k) => void s.exited.then((code) => exits.push(`instance ${k} exited (${code}):\n${s.log().slice(-4000)}`)));
    /** Goals accepted so far; throws as soon as an instance has exited (the fault this spec replays). */
    const acceptedNow = () => {
      if (exits.length) throw new Error(exits.join('\n'));
      return accepted.size;
    };
    /** Per restart: from the server's start again to 20 more goals accepted (reported, not asserted). */
    const backAfterMs: Record<string, number> = {};
    for (const mode of ['fast', 'immediate'] as const) {
      const before = acceptedNow();
      await eventually(async () => (acceptedNow() >= before + 20 ? true : undefined), 30_000, 'goals flowing before the restart');
      await pauseServer(cluster.pg, mode);
      await sleep(1000);
      cluster.pg = await resumeServer(cluster.pg);
      const resumed = Date.now();
      // Back by itself: goals are accepted again on every instance.
      const after = acceptedNow();
      await eventually(
        async () => (acceptedNow() >= after + 20 ? true : undefined),
        60_000,
        `goals accepted again after the ${mode} restart`,
      );
      backAfterMs[mode] = Date.now() - resumed;
    }
    flowing = false;
    await flow;

    expect(exits).toEqual([]);
    for (const sample of samples) expect(await ready(sample)).toBe(200);
    const runs = await eventually(
      async () => {
        const rows = await rowsOnce<{ goal: string; status: string; attempts: number }>(
          cluster.pg.url,
          `SELECT goal, status, attempts FROM zmodu_agent_runs WHERE goal LIKE 'restart goal %'`,
        );
        return rows.every((r) => r.status === 'succeeded' || r.status === 'failed') ? rows : undefined;
      },
      60_000,
      'every stored goal to end',
    );
    // Every accepted goal is stored; every stored goal (a post whose answer the outage cut off included) ran once.
    const stored = new Set(runs.map((r) => r.goal));
    expect([...accepted.keys()].filter((goal) => !stored.has(goal))).toEqual([]);
    // A claim whose COMMIT the restart cut off before its answer holds its lease until it lapses: that run starts on its
    // second attempt, still once (the model requests below).
    expect(runs.filter((r) => r.status !== 'succeeded' || r.attempts > 2)).toEqual([]);
    expect(runs.filter((r) => requests.get(r.goal) !== 1).map((r) => [r.goal, requests.get(r.goal)])).toEqual([]);
    expect(exits).toEqual([]);
    // What the unhandled-rejection net of each instance saw (stats().unhandledRejections): a `raised` one ends the
    // instance (an exit above); `contained` ones are a library's unawaited calls that the outage failed.
    const nets = await Promise.all(
      samples.map(async (sample) => (await call(sample, 'GET', '/admin/agents', dana)).body.worker as { unhandledRejections: unknown }),
    );
    console.log(
      'RESTART',
      JSON.stringify({
        posted,
        accepted: accepted.size,
        stored: runs.length,
        retried: runs.filter((r) => r.attempts > 1).length,
        answers: [...answers],
        backAfterMs,
        unhandledRejections: nets.map((n) => n.unhandledRejections),
      }),
    );
  }, 300_000);
});

/**
 * The fault itself, made certain: one PgBossGoalQueue in a child process (test/support/pg-boss-outage-child.ts) holds a
 * goal in its handler while the server is stopped (fast shutdown), then the handler returns, so the job is completed
 * while the database is away. pg-boss 10's `work` loop did not await that completion: its rejection was unhandled and
 * Node ended the process (exit code 1, no `ALIVE`). pg-boss 12's `work` awaits it and reports it as an `error` event,
 * and the process lives.
 */
describe('chaos: a pg-boss job completed while PostgreSQL is down', () => {
  let pg: OwnServer | undefined;
  beforeAll(async () => {
    pg = await startOwnServer();
  }, 60_000);
  afterAll(async () => {
    await stopServer(pg);
  });

  it('does not end the process (attack: PostgreSQL restarted under pg-boss while a goal runs)', async () => {
    const server = pg as OwnServer;
    const child = spawn(
      process.execPath,
      ['-r', join(__dirname, '..', '..', 'scripts', 'register-ts.js'), 'test/support/pg-boss-outage-child.ts', server.url],
      { cwd: `${__dirname}/../..`, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(async () => (out.includes('HOLDING') ? true : undefined), 30_000, 'the goal to hold');
      await pauseServer(server);
      child.stdin.write('go\n');
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('still running'), 20_000)))]);
      clearTimeout(timer);
      expect({ code, alive: out.includes('ALIVE') }).toEqual({ code: 0, alive: true });
    } finally {
      child.kill('SIGKILL');
      pg = await resumeServer(server);
    }
  }, 90_000);
});
