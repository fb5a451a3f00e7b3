import type { PostGoalOptions } from '../worker/agent-worker';
import { NewAgentJob } from './agent-job.ports';
import { cronProblem, latestTickBetween } from './agent-job-cron';
import { AgentJobPoster, AgentJobScheduler } from './agent-job-scheduler';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';

class RecordingPoster implements AgentJobPoster {
  readonly posts: { goal: string; scope: PostGoalOptions }[] = [];
  async post(goal: string, scope: PostGoalOptions) {
    this.posts.push({ goal, scope });
    return { runId: `run-${this.posts.length}` };
  }
}

const job = (over: Partial<NewAgentJob> = {}): NewAgentJob => ({
  id: 'job-1',
  tenantId: 't1',
  userId: 'u1',
  permissions: ['reports:read'],
  agent: 'reporter',
  goal: 'send the daily report',
  cron: '0 9 * * *',
  timeZone: 'UTC',
  missed: 'skip',
  origin: 'dynamic',
  ...over,
});

describe('AgentJobScheduler (fake timers)', () => {
  let schedulers: AgentJobScheduler[];
  beforeEach(() => {
    jest.useFakeTimers();
    schedulers = [];
  });
  afterEach(() => {
    schedulers.forEach((s) => s.stop());
    jest.useRealTimers();
  });
  const scheduler = (store: InMemoryAgentJobStore, poster: AgentJobPoster, syncMs?: number) => {
    const s = new AgentJobScheduler(store, poster, syncMs);
    schedulers.push(s);
    return s;
  };

  it('a tick posts the goal once, with the job scope and origin', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:59:30Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job());
    const poster = new RecordingPoster();
    await scheduler(store, poster).start();
    await jest.advanceTimersByTimeAsync(29_000);
    expect(poster.posts).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(poster.posts).toEqual([
      {
        goal: 'send the daily report',
        scope: {
          agent: 'reporter',
          tenantId: 't1',
          userId: 'u1',
          permissions: ['reports:read'],
          jobId: 'job-1',
          jobTick: '2026-01-01T09:00:00.000Z',
        },
      },
    ]);
    await jest.advanceTimersByTimeAsync(60 * 60_000);
    expect(poster.posts).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(24 * 60 * 60_000);
    expect(poster.posts.map((p) => p.scope.jobTick)).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-02T09:00:00.000Z']);
  });

  it('two schedulers on one store (two instances): each tick posts once', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:59:00Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ cron: '*/5 * * * *' }));
    const poster = new RecordingPoster();
    await scheduler(store, poster).start();
    await scheduler(store, poster).start();
    await jest.advanceTimersByTimeAsync(11 * 60_000);
    expect(poster.posts.map((p) => p.scope.jobTick)).toEqual([
      '2026-01-01T09:00:00.000Z',
      '2026-01-01T09:05:00.000Z',
      '2026-01-01T09:10:00.000Z',
    ]);
  });

  it.each([
    ['skip', []],
    ['catch_up', ['2026-01-01T05:00:00.000Z']],
  ] as const)('missed ticks while down, policy %s: runs %j at start (never once per missed tick)', async (missed, ticks) => {
    jest.setSystemTime(new Date('2026-01-01T00:00:30Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ cron: '0 * * * *', missed }));
    jest.setSystemTime(new Date('2026-01-01T05:30:00Z'));
    const poster = new RecordingPoster();
    await scheduler(store, poster).start();
    expect(poster.posts.map((p) => p.scope.jobTick)).toEqual(ticks);
    // A second instance starting later does not catch up the same tick again.
    await scheduler(store, poster).start();
    expect(poster.posts.map((p) => p.scope.jobTick)).toEqual(ticks);
    await jest.advanceTimersByTimeAsync(30 * 60_000);
    expect(poster.posts.map((p) => p.scope.jobTick)).toEqual([...ticks, '2026-01-01T06:00:00.000Z']);
  });

  it('the periodic sync picks up jobs created and cancelled on another instance', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:00:00Z'));
    const store = new InMemoryAgentJobStore();
    const poster = new RecordingPoster();
    const s = scheduler(store, poster, 10_000);
    await s.start();
    await store.upsert(job({ cron: '*/2 * * * *' }));
    expect(s.jobIds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(s.jobIds()).toEqual(['job-1']);
    await jest.advanceTimersByTimeAsync(2 * 60_000);
    expect(poster.posts).toHaveLength(1);
    expect(await store.cancel('t1', 'job-1')).toBe(true);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(s.jobIds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(poster.posts).toHaveLength(1);
  });

  it('a static job retired by a later boot stays retired: the sync of an instance running older code disarms it', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:00:00Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ id: 'static:report', origin: 'static', cron: '*/2 * * * *' }));
    const poster = new RecordingPoster();
    const old = scheduler(store, poster, 10_000); // older code, still running during a rolling deploy
    await old.start();
    expect(old.jobIds()).toEqual(['static:report']);
    expect(await store.retireStatic(['static:other'])).toEqual(['static:report']); // newer code booted without it
    await jest.advanceTimersByTimeAsync(10_000);
    expect(await store.active()).toEqual([]);
    expect(old.jobIds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(poster.posts).toEqual([]);
  });

  it('a post that fails is logged, the job keeps its schedule, and a sync posts the refused tick again', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:59:59Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ cron: '*/5 * * * *' }));
    const ticks: string[] = [];
    const poster: AgentJobPoster = {
      post: async (_goal, scope) => {
        ticks.push(scope.jobTick as string);
        if (ticks.length === 1) throw new Error('mailbox full');
        return { runId: 'r' };
      },
    };
    await scheduler(store, poster, 10_000).start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(ticks).toEqual(['2026-01-01T09:00:00.000Z']); // refused
    await jest.advanceTimersByTimeAsync(20_000); // a sync after syncMs claims it again and posts it
    expect(ticks).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-01T09:00:00.000Z']);
    await jest.advanceTimersByTimeAsync(5 * 60_000);
    expect(ticks).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-01T09:00:00.000Z', '2026-01-01T09:05:00.000Z']);
  });

  it('a tick whose claim failed (the database away): a catch_up job posts it at the next sync, once; a skip job never', async () => {
    jest.setSystemTime(new Date('2026-01-01T08:59:59Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ id: 'catch', cron: '*/5 * * * *', missed: 'catch_up' }));
    await store.upsert(job({ id: 'skip', cron: '*/5 * * * *', missed: 'skip' }));
    let down = true;
    const claimTick = store.claimTick.bind(store);
    store.claimTick = async (id, tick) => {
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return claimTick(id, tick);
    };
    const poster = new RecordingPoster();
    const a = scheduler(store, poster, 10_000);
    const b = scheduler(store, poster, 10_000); // a second instance: the catch-up is still posted once
    await a.start();
    await b.start();
    await jest.advanceTimersByTimeAsync(1_000); // 09:00 fires on both; neither claim reaches the database
    expect(poster.posts).toEqual([]);
    down = false;
    await jest.advanceTimersByTimeAsync(10_000); // the syncs after the database came back
    expect(poster.posts.map((p) => [p.scope.jobId, p.scope.jobTick])).toEqual([['catch', '2026-01-01T09:00:00.000Z']]);
    await jest.advanceTimersByTimeAsync(30_000); // later syncs post nothing more
    expect(poster.posts).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(5 * 60_000); // and the schedule goes on for both
    expect(
      poster.posts
        .map((p) => [p.scope.jobId, p.scope.jobTick])
        .slice(1)
        .sort(),
    ).toEqual([
      ['catch', '2026-01-01T09:05:00.000Z'],
      ['skip', '2026-01-01T09:05:00.000Z'],
    ]);
  });

  it('a tick claimed by an instance that died before posting is posted by a sync of another, once', async () => {
    jest.setSystemTime(new Date('2026-01-01T09:00:00Z'));
    const store = new InMemoryAgentJobStore();
    await store.upsert(job({ cron: '0 9 * * *' }));
    expect(await store.claimTick('job-1', new Date('2026-01-01T09:00:00Z'))).toBe(true); // ...and the process died
    const a = new RecordingPoster();
    const b = new RecordingPoster();
    await scheduler(store, a, 10_000).start();
    await scheduler(store, b, 10_000).start();
    expect([...a.posts, ...b.posts]).toEqual([]);
    await jest.advanceTimersByTimeAsync(30_000);
    const posts = [...a.posts, ...b.posts];
    expect(posts.map((p) => p.scope.jobTick)).toEqual(['2026-01-01T09:00:00.000Z']);
    await jest.advanceTimersByTimeAsync(60_000); // recorded (setTickRun): never again
    expect([...a.posts, ...b.posts]).toHaveLength(1);
  });
});

describe('cron validation', () => {
  it.each([
    ['* * * * * *', 'UTC', 'more than once a minute'],
    ['*/10 * * * * *', 'UTC', 'more than once a minute'],
    ['not a cron', 'UTC', 'fields'],
    ['61 * * * *', 'UTC', 'not a valid expression'],
    ['0 9 * * *', 'Mars/Olympus', 'time zone'],
    ['', 'UTC', 'cron is required'],
    ['0 9 * * *', '', 'timeZone is required'],
  ])('%j in %j is refused (%s)', (cron, tz, message) => {
    expect(cronProblem(cron, tz)).toContain(message);
  });

  it.each([
    ['0 9 * * 1-5', 'Europe/Paris'],
    ['0 0 9 * * *', 'UTC'],
    ['*/5 * * * *', 'UTC'],
  ])('%j in %j is accepted', (cron, tz) => {
    expect(cronProblem(cron, tz)).toBeNull();
  });

  it('latestTickBetween finds the latest tick only', () => {
    expect(latestTickBetween('0 * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T05:59:00Z'))?.toISOString()).toBe(
      '2026-01-01T05:00:00.000Z',
    );
    expect(latestTickBetween('0 * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:59:00Z'))).toBeNull();
  });
});
