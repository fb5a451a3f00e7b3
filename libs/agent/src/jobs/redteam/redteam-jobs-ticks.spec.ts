import type { PostGoalOptions } from '../../worker/agent-worker';
import { InvalidGoalException } from '../../exceptions/invalid-goal.exception';
import { MailboxFullException } from '../../exceptions/mailbox-full.exception';
import { AgentJob } from '../agent-job.decorator';
import { NewAgentJob } from '../agent-job.ports';
import { AgentJobPoster, AgentJobScheduler } from '../agent-job-scheduler';
import { InMemoryAgentJobStore } from '../in-memory-agent-job.store';

const job = (over: Partial<NewAgentJob> = {}): NewAgentJob => ({
  id: 'job-1',
  tenantId: 't1',
  userId: 'u1',
  permissions: [],
  agent: 'reporter',
  goal: 'send the report',
  cron: '* * * * *',
  timeZone: 'UTC',
  missed: 'skip',
  origin: 'dynamic',
  ...over,
});

/** Refuses the goals of `refused` jobs the way AgentWorker.post does for good (an agent removed since). */
class Poster implements AgentJobPoster {
  readonly calls: string[] = [];
  constructor(private readonly refuse: (scope: PostGoalOptions) => Error | null) {}
  async post(_goal: string, scope: PostGoalOptions) {
    this.calls.push(`${scope.jobId}@${scope.jobTick}`);
    const err = this.refuse(scope);
    if (err) throw err;
    return { runId: `run-${this.calls.length}` };
  }
}

describe('red team: scheduled job ticks (issue 13)', () => {
  let schedulers: AgentJobScheduler[];
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(new Date('2026-01-01T08:59:30Z'));
    schedulers = [];
  });
  afterEach(() => {
    schedulers.forEach((s) => s.stop());
    jest.useRealTimers();
  });

  it('RJ-1: a tick whose goal the worker refuses for good (InvalidGoalException) is not posted again at every sync', async () => {
    const store = new InMemoryAgentJobStore();
    await store.upsert(job());
    const poster = new Poster(() => new InvalidGoalException("no agent named 'reporter' (agents: trader)"));
    const s = new AgentJobScheduler(store, poster, 1_000);
    schedulers.push(s);
    await s.start();
    await jest.advanceTimersByTimeAsync(60_000); // the 09:00 tick fires at 30 s, then 30 syncs
    s.stop();
    expect(poster.calls).toEqual(['job-1@2026-01-01T09:00:00.000Z']); // 30 times before the fix, for a day
  });

  it('a post refused by a full mailbox is still retried at the next sync', async () => {
    const store = new InMemoryAgentJobStore();
    await store.upsert(job());
    let full = true;
    const poster = new Poster(() => (full ? new MailboxFullException(1, 1) : null));
    const s = new AgentJobScheduler(store, poster, 1_000);
    schedulers.push(s);
    await s.start();
    await jest.advanceTimersByTimeAsync(40_000); // the 09:00 tick fires at 30 s, then 10 syncs
    const tries = poster.calls.length;
    expect(tries).toBeGreaterThan(1);
    full = false;
    await jest.advanceTimersByTimeAsync(2_000);
    expect(poster.calls.length).toBe(tries + 1);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(poster.calls.length).toBe(tries + 1);
  });

  it.each([
    ['tenantId', '0'],
    ['tenantId', 'acme\u0000'],
    ['userId', '0'],
    ['userId', 'u\u0007'],
    ['tenantId', 'x'.repeat(201)],
  ])('RJ-2: @AgentJob refuses %s %j at import (the worker would refuse its goal at every tick)', (field, value) => {
    expect(() =>
      AgentJob({
        name: 'nightly',
        cron: '0 3 * * *',
        timeZone: 'UTC',
        goal: 'summarize',
        tenantId: 'acme',
        userId: 'ops',
        permissions: [],
        [field]: value,
      }),
    ).toThrow(field);
  });
});
