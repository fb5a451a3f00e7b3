import { Test, TestingModule } from '@nestjs/testing';
import { AgentModule } from '../../agent.module';
import { AgentWorkerModule } from '../agent-worker.module';
import { compileWorkerApp, GatedModel, SCOPE, spec, until, WorkerSkills } from '../__fixtures__/worker-fixtures';
import { AgentRunClock, AgentRunLease, GoalQueue, settledWithin } from '../worker.ports';
import { AgentWorker } from '../agent-worker';
import { InMemoryAgentRunStore } from '../in-memory-agent-run.store';
import { ModelProvider, ModelTurn } from '../../providers/model-provider';
import { LEASE_LOST_MESSAGE } from '../../agent.messages';
import { AgentRunRecord } from '../worker.ports';

/** A run store whose lease renewals fail (the instance lost its database; the others still see it). */
class PartitionedStore extends InMemoryAgentRunStore {
  partitioned = false;
  override async heartbeat(leases: readonly AgentRunLease[], leaseMs: number, clock: AgentRunClock): Promise<string[]> {
    if (this.partitioned) throw new Error('connection terminated unexpectedly');
    return super.heartbeat(leases, leaseMs, clock);
  }
}

describe('red team cluster: an instance that cannot renew its leases', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('RT-C1 stops its run before its lease expires (then another instance may hand it over and run it again)', async () => {
    const store = new PartitionedStore();
    const model = new GatedModel();
    // When its run is stopped: why, and the run as the store held it at that moment (an in-memory read).
    let stopped: { reason: unknown; stored: Promise<AgentRunRecord | null> } | undefined;
    const original = model.complete.bind(model);
    model.complete = (request) => {
      request.signal.addEventListener('abort', () => (stopped ??= { reason: request.signal.reason, stored: store.get('t1', runId) }), {
        once: true,
      });
      return original(request);
    };
    let runId = '';
    // A lease of 3 s renewed every 100 ms: room for a loaded machine's late timers, none for a run kept past its lease.
    app = await compileWorkerApp([spec(model)], { runStore: store, leaseMs: 3000, heartbeatMs: 100, shutdownGraceMs: 0 });
    await app.init();
    ({ runId } = await app.get(AgentWorker).post('quote ACME', SCOPE));
    await until(() => model.started === 1, 'the run to start');
    store.partitioned = true;
    // Seen from the database, the lease expires leaseMs after the last renewal: another instance's sweep hands the
    // run back and runs it again. This instance must not keep running it past that point.
    // Stopped by the fence (now - last renewal >= leaseMs - heartbeatMs, at a heartbeat), and while the run was still
    // this instance's in the store: no sweep had yet found its lease expired and handed it back (this instance's own
    // sweep keeps running through the partition, as another instance's would). The order of events is asserted, not
    // the clock: how much of the lease was left is the worker's rule above.
    await until(() => stopped !== undefined, 'the run to be stopped', 20_000);
    expect((stopped!.reason as Error).message).toBe(LEASE_LOST_MESSAGE);
    expect(await stopped!.stored).toMatchObject({ status: 'running', leaseOwner: expect.any(String) });
    await until(() => app!.get(AgentWorker).stats().interrupted >= 1, 'the fenced run to return', 10_000);
    expect(app.get(AgentWorker).stats()).toMatchObject({ succeeded: 0, failed: 0 });
    // Nothing was written for it: once the database is back, the run is retried (here by this instance's own sweep).
    store.partitioned = false;
    model.open();
    await until(async () => (await store.get('t1', runId))?.status === 'succeeded', 'the retried run', 15_000);
  });
});

/** A shared queue as pg-boss is one: every push is a new delivery, whatever this instance is running. */
class SharedQueue implements GoalQueue {
  readonly shared = true;
  private handle?: (runId: string) => Promise<void>;
  private readonly active = new Set<Promise<void>>();
  async start(handle: (runId: string) => Promise<void>): Promise<void> {
    this.handle = handle;
  }
  async push(runIds: readonly string[]): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    for (const id of runIds) {
      const job = handle(id).finally(() => this.active.delete(job));
      this.active.add(job);
    }
  }
  async stop(graceMs: number): Promise<void> {
    this.handle = undefined;
    await settledWithin(this.active, graceMs);
  }
}

describe('red team cluster: a run handed back while its first copy still winds down on the same instance', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('RT-C13 never runs a second copy beside it, and the run still ends with one outcome', async () => {
    const store = new PartitionedStore();
    let calls = 0;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const model: ModelProvider = {
      name: 'deaf',
      async complete(): Promise<ModelTurn> {
        calls++;
        await gate; // a call that ignores the abort signal
        return { text: `copy ${calls}`, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    app = await Test.createTestingModule({
      imports: [
        AgentModule.forRoot({ agents: [spec(model)], guard: { auditStore: 'memory', quotaStore: 'memory' } }),
        AgentWorkerModule.forRoot({
          runStore: store,
          concurrency: 2,
          leaseMs: 200,
          heartbeatMs: 50,
          shutdownGraceMs: 0,
          queue: { driver: new SharedQueue() },
        }),
      ],
      providers: [WorkerSkills],
    }).compile();
    await app.init();
    const { runId } = await app.get(AgentWorker).post('quote ACME', SCOPE);
    await until(() => calls === 1, 'the run to start');
    store.partitioned = true; // its lease expires; this instance's own sweep hands the run back
    await new Promise((r) => setTimeout(r, 800));
    expect(calls).toBe(1);
    store.partitioned = false;
    open();
    await until(async () => ['succeeded', 'failed'].includes((await store.get('t1', runId))?.status ?? ''), 'the run to end', 10_000);
    await until(() => app!.get(AgentWorker).stats().running === 0, 'no run left', 10_000);
    expect(calls).toBeLessThanOrEqual(2);
  });
});
