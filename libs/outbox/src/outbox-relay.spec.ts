import { LEASE_MARGIN_MS, OutboxRelay } from './outbox-relay';
import { OutboxStore } from './outbox.store';
import { OutboxEvent } from './outbox.types';

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

/** A store of one event, in memory, that records the relay's calls in order. */
function oneEventStore(calls: string[]): OutboxStore {
  let claimed = false;
  const event: OutboxEvent = {
    id: 'e-1',
    tenantId: 'acme',
    topic: 'blocked',
    payload: {},
    idempotencyKey: null,
    status: 'delivering',
    attempts: 1,
    maxAttempts: 3,
    nextAttemptAt: new Date(0),
    lastError: null,
    createdAt: new Date(0),
    deliveredAt: null,
    command: null,
  };
  return {
    reapExpired: async () => 0,
    claim: async () => {
      if (claimed) return [];
      claimed = true;
      return [{ event, leaseToken: '1' }];
    },
    renew: async () => true,
    settleDelivered: async () => {
      calls.push('settleDelivered');
      return 'delivered';
    },
    settleFailed: async () => {
      calls.push('settleFailed');
      return 'failed';
    },
  } as unknown as OutboxStore;
}

/** A handler that runs until the test releases it, ignoring its signal. */
function blockedHandler(calls: string[]) {
  let release!: () => void;
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const handler = async () => {
    calls.push('handler');
    entered();
    await gate;
  };
  return { handler, started, release };
}

const macrotasks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('OutboxRelay.stop and the work a relay still has', () => {
  it('waits for a runOnce pass under way: its delivery settles before stop resolves', async () => {
    const calls: string[] = [];
    const relay = new OutboxRelay(oneEventStore(calls));
    const blocked = blockedHandler(calls);
    relay.on('blocked', blocked.handler);
    const pass = relay.runOnce();
    await blocked.started;
    const stopping = relay.stop().then(() => void calls.push('stopped'));
    await macrotasks(20);
    expect(calls).toEqual(['handler']); // stop is still waiting for the pass
    blocked.release();
    await stopping;
    expect(calls).toEqual(['handler', 'settleDelivered', 'stopped']);
    expect(await pass).toMatchObject({ claimed: 1, delivered: 1 });
  });

  it('waits for a handler abandoned at its deadline for the rest of its lease, and settles its late success', async () => {
    const calls: string[] = [];
    // The handler's deadline (20 ms) always passes: it runs until released. The lease leaves 60 s more.
    const relay = new OutboxRelay(oneEventStore(calls), { handlerTimeoutMs: 20, leaseMs: 60_020 });
    const blocked = blockedHandler(calls);
    relay.on('blocked', blocked.handler);
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
    const stopping = relay.stop().then(() => void calls.push('stopped'));
    await macrotasks(20);
    expect(calls).toEqual(['handler', 'settleFailed']);
    blocked.release();
    await stopping;
    expect(calls).toEqual(['handler', 'settleFailed', 'settleDelivered', 'stopped']);
  });

  it('gives up on an abandoned handler when its lease is over: a success it reports after stop is not settled', async () => {
    const calls: string[] = [];
    const relay = new OutboxRelay(oneEventStore(calls), { handlerTimeoutMs: 20, leaseMs: 70 });
    const blocked = blockedHandler(calls);
    relay.on('blocked', blocked.handler);
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
    await relay.stop(); // resolves 50 ms on (leaseMs - handlerTimeoutMs), the handler still blocked
    blocked.release();
    await macrotasks(20);
    expect(calls).toEqual(['handler', 'settleFailed']);
  });
});
