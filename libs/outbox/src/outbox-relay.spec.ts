import { LEASE_MARGIN_MS, OutboxRelay } from './outbox-relay';
import { OutboxStore } from './outbox.store';

describe('OutboxRelay options', () => {
  const store = {} as OutboxStore;

  it('refuses a lease that does not outlast the handler timeout, saying what to change', () => {
    expect(() => new OutboxRelay(store, { leaseMs: 30_000, handlerTimeoutMs: 30_000 })).toThrow(
      /leaseMs \(30000\) must be longer than handlerTimeoutMs \(30000\).*Raise leaseMs .* or lower handlerTimeoutMs/,
    );
    expect(() => new OutboxRelay(store, { leaseMs: 1000 })).toThrow(/must be longer than handlerTimeoutMs \(30000\)/);
  });

  it('defaults the lease to the handler timeout plus a margin', () => {
    expect(new OutboxRelay(store, {}).leaseMs).toBe(30_000 + LEASE_MARGIN_MS);
    expect(new OutboxRelay(store, { handlerTimeoutMs: 2000 }).leaseMs).toBe(2000 + LEASE_MARGIN_MS);
    expect(new OutboxRelay(store, { handlerTimeoutMs: 200, leaseMs: 250 }).leaseMs).toBe(250);
  });

  it('defaults concurrency to 8 and the per-topic limit to half of it; refuses nonsense', () => {
    expect(new OutboxRelay(store)).toMatchObject({ concurrency: 8, topicConcurrency: 4 });
    expect(new OutboxRelay(store, { concurrency: 1 })).toMatchObject({ concurrency: 1, topicConcurrency: 1 });
    expect(() => new OutboxRelay(store, { concurrency: 0 })).toThrow(/concurrency is 0; it must be a positive integer/);
    expect(() => new OutboxRelay(store, { concurrency: 4, topicConcurrency: 5 })).toThrow(
      /topicConcurrency is 5; it must be a positive integer at most concurrency \(4\)/,
    );
    expect(() => new OutboxRelay(store, { handlerTimeoutMs: -1 })).toThrow(/handlerTimeoutMs/);
    expect(() => new OutboxRelay(store, { pollIntervalMs: 0 })).toThrow(/pollIntervalMs/);
  });
});

describe('OutboxRelay.stop', () => {
  it('waits for the reap of the current tick, and claims nothing after it (so nothing outlives the database)', async () => {
    const calls: string[] = [];
    let reaped!: () => void;
    const store = {
      reapExpired: () => {
        calls.push('reap');
        return new Promise<number>((resolve) => (reaped = () => resolve(0)));
      },
      claim: async () => {
        calls.push('claim');
        return [];
      },
    } as unknown as OutboxStore;
    const relay = new OutboxRelay(store, { pollIntervalMs: 5 });
    relay.start();
    await new Promise((r) => setTimeout(r, 30)); // ticks meanwhile do not start a second reap beside the first
    expect(calls).toEqual(['reap']);
    let stopped = false;
    const stopping = relay.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped).toBe(false);
    reaped();
    await stopping;
    expect(calls).toEqual(['reap']);
  });
});
