import { TestingModule } from '@nestjs/testing';
import { compileWorkerApp, GatedModel, SCOPE, spec, until } from '../__fixtures__/worker-fixtures';
import { AgentWorker } from '../agent-worker';
import { InMemoryAgentRunStore } from '../in-memory-agent-run.store';

/** A run store whose lease renewals fail (the instance lost its database; the others still see it). */
class PartitionedStore extends InMemoryAgentRunStore {
  partitioned = false;
  override async heartbeat(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    if (this.partitioned) throw new Error('connection terminated unexpectedly');
    return super.heartbeat(owner, runIds, leaseMs);
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
    let abortedAt = 0;
    const original = model.complete.bind(model);
    model.complete = (request) => {
      request.signal.addEventListener('abort', () => (abortedAt ||= Date.now()), { once: true });
      return original(request);
    };
    app = await compileWorkerApp([spec(model)], { runStore: store, leaseMs: 300, heartbeatMs: 50, shutdownGraceMs: 0 });
    await app.init();
    const { runId } = await app.get(AgentWorker).post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the run to start');
    store.partitioned = true;
    const partitionedAt = Date.now();
    // Seen from the database, the lease expires 300 ms after the last renewal: another instance's sweep hands the
    // run back and runs it again. This instance must not keep running it past that point.
    await new Promise((r) => setTimeout(r, 600));
    expect(abortedAt).toBeGreaterThan(0);
    // The last renewal was at most one heartbeat (50 ms) before the partition: the lease ends 250-300 ms after it.
    expect(abortedAt - partitionedAt).toBeLessThan(300);
    await until(() => app!.get(AgentWorker).stats().interrupted >= 1, 'the fenced run to return', 2000);
    expect(app.get(AgentWorker).stats()).toMatchObject({ succeeded: 0, failed: 0 });
    // Nothing was written for it: once the database is back, the run is retried (here by this instance's own sweep).
    store.partitioned = false;
    model.open();
    await until(async () => (await store.get('t1', runId))?.status === 'succeeded', 'the retried run', 3000);
  });
});
