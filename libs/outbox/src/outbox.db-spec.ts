import { DataSource } from 'typeorm';
import { startOutboxApp } from './__fixtures__/outbox-app';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { commandKey } from './command-key';
import { OutboxRelay, RelayCrash, RelayPass } from './outbox-relay';
import { OutboxService } from './outbox.service';
import { CommandDefinition, OutboxEvent } from './outbox.types';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Crash = 'none' | 'before_commit' | 'after_commit' | 'after_dispatch' | 'in_handler';
const CRASHES: Crash[] = ['none', 'before_commit', 'after_commit', 'after_dispatch', 'in_handler'];

describe('transactional outbox: nothing lost, nothing twice', () => {
  let db: TestDatabase;
  let t: Awaited<ReturnType<typeof startOutboxApp>>;
  const crashOf = new Map<string, Crash>();

  const credit: CommandDefinition = {
    name: 'ledger.credit',
    description: 'credit an account',
    parameters: {
      type: 'object',
      properties: { account: { type: 'string' }, amount: { type: 'integer', minimum: 1 } },
      required: ['account', 'amount'],
      additionalProperties: false,
    },
    handler: async (args, { transaction, invocation }) => {
      await transaction.query('INSERT INTO ledger (run_id, tenant_id, account, amount) VALUES ($1, $2, $3, $4)', [
        invocation.runId,
        invocation.tenantId,
        args.account,
        args.amount,
      ]);
      if (crashOf.get(invocation.runId) === 'before_commit') throw new Error('process died before the commit');
      return { topic: 'ledger.credited', payload: { account: args.account, amount: args.amount, runId: invocation.runId } };
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // A crashed relay abandons its whole batch, and each abandoned claim counts as an attempt: room for that.
    t = await startOutboxApp(db, { commands: [credit], maxAttempts: 20 });
  });

  afterAll(async () => {
    await t?.app.close();
    await db?.drop();
  });

  /** A delivery handler that applies the effect keyed on the event id, and can be made to die halfway. */
  function applier(ds: DataSource, crashInside: Set<string>) {
    return async (event: OutboxEvent) => {
      const p = event.payload as { account: string; amount: number; runId: string };
      await ds.transaction(async (m) => {
        await m.query('INSERT INTO applied (event_id, account, amount) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING', [
          event.id,
          p.account,
          p.amount,
        ]);
        if (crashInside.delete(p.runId)) throw new Error('process died inside the handler');
      });
    };
  }

  function relay(name: string, crashAfterClaim: Set<string>, crashAfterDispatch: Set<string>, crashInside: Set<string>): OutboxRelay {
    // Deadlines far above the work (no handler times out, no live lease runs out, however slow the machine): the
    // claims a crash abandons are expired by the test, between rounds, as the dead process's lease running out.
    const r = new OutboxRelay(t.store, {
      owner: name,
      leaseMs: 120_000,
      handlerTimeoutMs: 60_000,
      concurrency: 5,
      backoff: { baseMs: 5, maxMs: 20 },
      hooks: {
        afterClaim: (e) => {
          if (crashAfterClaim.delete((e.payload as { runId: string }).runId)) throw new RelayCrash('after the commit, before dispatch');
        },
        afterDeliver: (e) => {
          if (crashAfterDispatch.delete((e.payload as { runId: string }).runId))
            throw new RelayCrash('after dispatch, before marking sent');
        },
      },
    });
    r.on('ledger.credited', applier(t.ds, crashInside));
    return r;
  }

  it('across many commands and two competing relays, with a crash injected at each point', async () => {
    const N = 40;
    const crashAfterClaim = new Set<string>();
    const crashAfterDispatch = new Set<string>();
    const crashInside = new Set<string>();
    const results: Array<{ runId: string; crash: Crash; eventId?: string }> = [];
    for (let i = 0; i < N; i++) {
      const runId = `run-${i}`;
      const crash = CRASHES[i % CRASHES.length];
      crashOf.set(runId, crash);
      if (crash === 'after_commit') crashAfterClaim.add(runId);
      if (crash === 'after_dispatch') crashAfterDispatch.add(runId);
      if (crash === 'in_handler') crashInside.add(runId);
      const r = await t.call('command.execute', { command: 'ledger.credit', args: { account: `acct-${i % 7}`, amount: i + 1 } }, runId);
      if (crash === 'before_commit') expect(r.ok).toBe(false);
      else expect(r.value).toMatchObject({ eventId: expect.any(String), replayed: false });
      results.push({ runId, crash, eventId: r.ok ? (r.value as { eventId: string }).eventId : undefined });
    }

    const relays = [
      relay('A', crashAfterClaim, crashAfterDispatch, crashInside),
      relay('B', crashAfterClaim, crashAfterDispatch, crashInside),
    ];
    const passes: RelayPass[] = [];
    let crashes = 0;
    // Bounded by rounds, not by time: each round delivers or crashes something, whatever the machine's speed.
    for (let round = 0; round < 200; round++) {
      const outcome = await Promise.allSettled(relays.map((r) => r.runOnce()));
      let crashed = 0;
      for (const o of outcome) {
        if (o.status === 'fulfilled') passes.push(o.value);
        else if (o.reason instanceof RelayCrash) crashed++;
        else throw o.reason;
      }
      crashes += crashed;
      // Both passes have ended: a live claim left now was abandoned by a crashed pass (a pass that ends settles all it
      // claimed; a claim abandoned earlier and not taken over yet is still delivering, under an expired lease).
      const [{ n: abandoned }] = await t.ds.query(
        `SELECT count(*)::int AS n FROM zmodu_outbox WHERE status = 'delivering' AND lease_until > now()`,
      );
      if (crashed === 0) expect(Number(abandoned)).toBe(0);
      // The dead process's leases run out.
      await t.ds.query(`UPDATE zmodu_outbox SET lease_until = now() - interval '1 second' WHERE status = 'delivering'`);
      const [{ n }] = await t.ds.query(`SELECT count(*) AS n FROM zmodu_outbox WHERE status <> 'delivered'`);
      if (Number(n) === 0) break;
      await sleep(40); // past the retry backoff (at most 20 ms) of the events that failed in their handler
    }

    const committed = results.filter((r) => r.crash !== 'before_commit');
    const rolledBack = results.filter((r) => r.crash === 'before_commit');
    expect(crashes).toBe(16); // 8 after the commit, 8 after dispatch
    // Every committed command: its business write, one event, delivered, its effect applied exactly once.
    expect(Number((await t.ds.query('SELECT count(*) AS n FROM ledger'))[0].n)).toBe(committed.length);
    const events = await t.ds.query(`SELECT id, status, attempts FROM zmodu_outbox WHERE topic = 'ledger.credited'`);
    expect(events).toHaveLength(committed.length);
    expect(events.every((e: { status: string }) => e.status === 'delivered')).toBe(true);
    const applied = await t.ds.query('SELECT event_id FROM applied');
    expect(applied.map((a: { event_id: string }) => a.event_id).sort()).toEqual(committed.map((c) => c.eventId).sort());
    // Some were delivered twice (after dispatch, before marking sent) and applied once all the same.
    expect(events.some((e: { attempts: number }) => e.attempts > 1)).toBe(true);
    // Nothing runs for a rolled-back command.
    for (const r of rolledBack) {
      expect(await t.ds.query('SELECT 1 FROM ledger WHERE run_id = $1', [r.runId])).toHaveLength(0);
      expect(await t.app.get(OutboxService).findByKey('acme', commandKey({ userId: 'u1', agent: 'ops', runId: r.runId }))).toBeNull();
    }
    // Replaying a key (same command, same arguments) returns the stored event and runs nothing again.
    for (const r of committed.slice(0, 5)) {
      const i = Number(r.runId.slice('run-'.length));
      const again = await t.call(
        'command.execute',
        { command: 'ledger.credit', args: { amount: i + 1, account: `acct-${i % 7}` } },
        r.runId,
      );
      expect(again.value).toEqual({ eventId: r.eventId, replayed: true });
    }
    expect(Number((await t.ds.query('SELECT count(*) AS n FROM ledger'))[0].n)).toBe(committed.length);
  });

  it('a stale relay cannot deliver or settle an attempt that a newer relay owns (fencing)', async () => {
    // Two relays whose process stalls past their lease (a hook that waits until the test lets it go): one before the
    // delivery, one after it. The lease runs out while it stalls; the test waits for that, then lets the newer relay in.
    const outbox = t.app.get(OutboxService);
    const stalls = new Map<string, () => void>();
    const stall = (owner: string) => new Promise<void>((resolve) => stalls.set(owner, resolve));
    const fastDone: string[] = [];
    const stalledBefore = new OutboxRelay(t.store, {
      owner: 'stalled-before',
      leaseMs: 60,
      handlerTimeoutMs: 50,
      hooks: { afterClaim: () => stall('stalled-before') },
    });
    const stalledAfter = new OutboxRelay(t.store, {
      owner: 'stalled-after',
      leaseMs: 60,
      handlerTimeoutMs: 50,
      hooks: { afterDeliver: () => stall('stalled-after') },
    });
    const fast = new OutboxRelay(t.store, { owner: 'fast', leaseMs: 60_000, handlerTimeoutMs: 30_000 });
    const slowDone: string[] = [];
    stalledBefore.on('fence.test', (e) => void slowDone.push(e.id));
    stalledAfter.on('fence.test', (e) => void slowDone.push(e.id));
    fast.on('fence.test', (e) => void fastDone.push(e.id));
    for (const stalled of [stalledBefore, stalledAfter]) {
      const id = await outbox.publish({ tenantId: 'acme', topic: 'fence.test', payload: {} });
      const stalledPass = stalled.runOnce();
      try {
        // The stalled relay holds the claim, and its lease has run out (the stall lasts until the test ends it).
        const deadline = Date.now() + 20_000;
        let lapsed = false;
        while (!lapsed && Date.now() < deadline) {
          const [lease] = await t.ds.query(`SELECT lease_owner = $2 AND lease_until < now() AS "lapsed" FROM zmodu_outbox WHERE id = $1`, [
            id,
            stalled.owner,
          ]);
          lapsed = lease?.lapsed === true;
          if (!lapsed) await sleep(10);
        }
        expect(lapsed).toBe(true);
        expect(stalls.has(stalled.owner)).toBe(true);
        expect(await fast.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      } finally {
        // Its process comes back (also when an expectation failed: the pass must not outlive the test).
        stalls.get(stalled.owner)?.();
        await Promise.allSettled([stalledPass]);
      }
      expect(await stalledPass).toMatchObject({ claimed: 1, delivered: 0, stale: 1 });
      const [row] = await t.ds.query('SELECT status, attempts FROM zmodu_outbox WHERE id = $1', [id]);
      expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    }
    // Stalled before the delivery: its renew fails and it delivers nothing; stalled after: delivered, but not settled.
    expect(slowDone).toHaveLength(1);
    expect(fastDone).toHaveLength(2);
  });

  it('dead-letters after N attempts; an admin sees it and can retry it', async () => {
    let healthy = false;
    const r = new OutboxRelay(t.store, { owner: 'dl', backoff: { baseMs: 1, maxMs: 1 } });
    r.on('flaky.topic', () => {
      if (!healthy) throw new Error('downstream is down');
    });
    const outbox = t.app.get(OutboxService);
    const id = await outbox.publish({ tenantId: 'acme', topic: 'flaky.topic', payload: { n: 1 }, maxAttempts: 3 });
    for (let i = 0; i < 3; i++) {
      await r.runOnce();
      await sleep(10);
    }
    const dead = await outbox.list('acme', { status: 'dead' });
    expect(dead.items.map((e) => e.id)).toContain(id);
    expect(dead.items.find((e) => e.id === id)).toMatchObject({ attempts: 3, lastError: 'downstream is down' });
    expect(await outbox.list('globex', { status: 'dead' })).toMatchObject({ total: 0 });
    healthy = true;
    expect(await outbox.retry('acme', id)).toMatchObject({ status: 'pending', attempts: 0 });
    await expect(outbox.retry('acme', id)).rejects.toThrow(/only a dead-lettered event/);
    expect(await outbox.retry('globex', id)).toBeNull();
    await r.runOnce();
    expect((await outbox.get('acme', id))?.status).toBe('delivered');
  });

  it('refuses a command without the permission, an unknown command and bad arguments', async () => {
    const noPerm = await t.call('command.execute', { command: 'ledger.credit', args: { account: 'a', amount: 1 } }, 'np-1', []);
    expect(noPerm.error).toMatchObject({ error: 'PermissionDenied', permission: 'command:execute' });
    const unknown = await t.call('command.execute', { command: 'ledger.debit', args: {} }, 'uk-1');
    expect(unknown.error).toMatchObject({ error: 'InvalidArguments' });
    const bad = await t.call('command.execute', { command: 'ledger.credit', args: { account: 'a', amount: -5 } }, 'bad-1');
    expect(bad.error).toMatchObject({ error: 'InvalidArguments', reason: 'invalid_arguments' });
    expect(await t.ds.query(`SELECT 1 FROM ledger WHERE run_id IN ('np-1', 'uk-1', 'bad-1')`)).toHaveLength(0);
  });
});
