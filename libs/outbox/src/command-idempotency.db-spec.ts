import { startOutboxApp } from './__fixtures__/outbox-app';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { SkillError } from '@zmodu/skills';
import { commandKey } from './command-key';
import { OutboxService } from './outbox.service';
import { CommandDefinition } from './outbox.types';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('command.execute: once per key, even when concurrent', () => {
  let db: TestDatabase;
  let t: Awaited<ReturnType<typeof startOutboxApp>>;
  /** Handler bodies entered, counted outside the transaction: a body that later rolls back counts too. */
  let entries = 0;

  const parameters = {
    type: 'object',
    properties: { n: { type: 'integer' }, tag: { type: 'string' }, extra: { type: 'object' } },
    additionalProperties: false,
  } as const;
  const touch: CommandDefinition = {
    name: 'probe.touch',
    parameters,
    handler: async (args, { transaction, invocation }) => {
      entries++;
      await transaction.query('SELECT 1 AS one');
      await sleep(40); // hold the transaction open: concurrent calls overlap
      return { topic: 'probe.touched', payload: { n: args.n, by: invocation.userId } };
    },
  };
  const other: CommandDefinition = {
    name: 'probe.other',
    parameters,
    handler: async () => {
      entries++;
      return { topic: 'probe.other', payload: {} };
    },
  };

  let failNext = false;
  let inside = 0;
  let mostInside = 0;
  const flaky: CommandDefinition = {
    name: 'probe.flaky',
    parameters,
    handler: async () => {
      entries++;
      inside++;
      mostInside = Math.max(mostInside, inside);
      try {
        await sleep(40);
        if (failNext) {
          failNext = false;
          throw new SkillError('flaked', 'failed before the commit');
        }
        return { topic: 'probe.flaky', payload: {} };
      } finally {
        inside--;
      }
    },
  };

  let releaseSlow: () => void = () => undefined;
  const slow: CommandDefinition = {
    name: 'probe.slow',
    parameters,
    handler: async () => {
      entries++;
      await new Promise<void>((r) => (releaseSlow = r));
      return { topic: 'probe.slow', payload: {} };
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // The wait bound is far above a handler's 40 ms, so that a loaded machine does not turn a waiter into a
    // command_in_progress; the bounded-wait test holds the key until it releases it, so it meets the bound whatever it is.
    t = await startOutboxApp(db, { commands: [touch, other, flaky, slow], commandLockWaitMs: 2000 });
  });

  afterAll(async () => {
    await t?.app.close();
    await db?.drop();
  });

  const execute = (
    runId: string,
    args: Record<string, unknown>,
    who: { userId?: string; agent?: string; tenantId?: string } = {},
    command = 'probe.touch',
  ) => t.call('command.execute', { command, args }, runId, ['command:execute'], who);

  it('five concurrent calls on one key run the handler body once and all answer with its event', async () => {
    const before = entries;
    const results = await Promise.all(Array.from({ length: 5 }, () => execute('conc-1', { n: 1 })));
    expect(entries - before).toBe(1);
    for (const r of results) expect(r.ok).toBe(true);
    const values = results.map((r) => r.value as { eventId: string; replayed: boolean });
    expect(values.filter((v) => !v.replayed)).toHaveLength(1);
    expect(new Set(values.map((v) => v.eventId)).size).toBe(1);
    const rows = await t.ds.query(`SELECT id FROM zmodu_outbox WHERE idempotency_key = $1`, [
      commandKey({ userId: 'u1', agent: 'ops', runId: 'conc-1' }),
    ]);
    expect(rows).toHaveLength(1);
    // And a later call with the key is a replay that runs nothing.
    expect((await execute('conc-1', { n: 1 })).value).toEqual({ eventId: values[0].eventId, replayed: true });
    expect(entries - before).toBe(1);
  });

  it('another user of the tenant reusing a run id neither gets a replay nor is blocked', async () => {
    const before = entries;
    // u2 claims the run id first, then u1 uses it; then both at once on another run id.
    const theirs = await execute('shared-run', { n: 7 }, { userId: 'u2' });
    const mine = await execute('shared-run', { n: 7 });
    expect(theirs.value).toMatchObject({ replayed: false });
    expect(mine.value).toMatchObject({ replayed: false });
    expect((mine.value as { eventId: string }).eventId).not.toBe((theirs.value as { eventId: string }).eventId);
    const [a, b] = await Promise.all([execute('shared-run-2', { n: 1 }, { userId: 'u2' }), execute('shared-run-2', { n: 1 })]);
    expect([a.value, b.value]).toEqual([expect.objectContaining({ replayed: false }), expect.objectContaining({ replayed: false })]);
    // Another agent of the same user has keys of its own too; another tenant as well.
    expect((await execute('shared-run', { n: 7 }, { agent: 'night-batch' })).value).toMatchObject({ replayed: false });
    expect((await execute('shared-run', { n: 7 }, { tenantId: 'globex' })).value).toMatchObject({ replayed: false });
    expect(entries - before).toBe(6);
    const event = await t.app.get(OutboxService).get('acme', (theirs.value as { eventId: string }).eventId);
    expect(event).toMatchObject({ payload: { by: 'u2' }, command: { name: 'probe.touch' } });
  });

  it('the same key with other arguments or another command is an idempotency_conflict naming the stored command', async () => {
    const first = await execute('conflict-1', { n: 1, tag: 'a', extra: { x: 1, y: [1, 2] } });
    expect(first.value).toMatchObject({ replayed: false });
    const before = entries;
    const otherArgs = await execute('conflict-1', { n: 2, tag: 'a', extra: { x: 1, y: [1, 2] } });
    expect(otherArgs.ok).toBe(false);
    expect(otherArgs.error).toMatchObject({
      reason: 'idempotency_conflict',
      storedCommand: 'probe.touch',
      message: expect.stringContaining("'probe.touch'"),
    });
    expect(otherArgs.error?.message).toMatch(/other arguments/);
    const otherCommand = await execute('conflict-1', { n: 1, tag: 'a', extra: { x: 1, y: [1, 2] } }, {}, 'probe.other');
    expect(otherCommand.error).toMatchObject({ reason: 'idempotency_conflict', storedCommand: 'probe.touch' });
    expect(otherCommand.error?.message).toMatch(/already executed command 'probe\.touch', not 'probe\.other'/);
    // The same arguments with the keys in another order are the same arguments: a replay.
    const same = await execute('conflict-1', { extra: { y: [1, 2], x: 1 }, tag: 'a', n: 1 });
    expect(same.value).toEqual({ eventId: (first.value as { eventId: string }).eventId, replayed: true });
    // Array order is part of the arguments.
    expect((await execute('conflict-1', { n: 1, tag: 'a', extra: { x: 1, y: [2, 1] } })).error).toMatchObject({
      reason: 'idempotency_conflict',
    });
    expect(entries).toBe(before);
    expect(
      await t.ds.query(`SELECT 1 FROM zmodu_outbox WHERE idempotency_key = $1`, [
        commandKey({ userId: 'u1', agent: 'ops', runId: 'conflict-1' }),
      ]),
    ).toHaveLength(1);
  });

  it('a rolled-back command leaves its key free: a concurrent call waits for the rollback, then runs', async () => {
    const before = entries;
    failNext = true;
    const [bad, good] = await Promise.all([
      execute('rb-1', { n: 1 }, {}, 'probe.flaky'),
      sleep(5).then(() => execute('rb-1', { n: 1 }, {}, 'probe.flaky')),
    ]);
    expect(bad.error).toMatchObject({ reason: 'flaked' });
    expect(good.value).toMatchObject({ replayed: false });
    expect(entries - before).toBe(2);
    expect(mostInside).toBe(1); // the two bodies never overlapped
  });

  it('a caller waits a bounded time for the key holder: on a server it answers the retryable command_in_progress, then the replay', async () => {
    const before = entries;
    const first = execute('run-slow-1', { n: 1 }, {}, 'probe.slow');
    while (entries === before) await sleep(10);
    const started = Date.now();
    const second = execute('run-slow-1', { n: 1 }, {}, 'probe.slow');
    if (db.kind === 'postgres') {
      const busy = await second;
      expect(busy.error).toMatchObject({ error: 'SkillFailed', reason: 'command_in_progress', retryable: true });
      expect(Date.now() - started).toBeLessThan(5_000);
      releaseSlow();
      const done = await first;
      expect(done.value).toMatchObject({ replayed: false });
      expect((await execute('run-slow-1', { n: 1 }, {}, 'probe.slow')).value).toEqual({
        eventId: (done.value as { eventId: string }).eventId,
        replayed: true,
      });
    } else {
      // One embedded session: the second call's transaction starts only after the first one ends, and replays it.
      setTimeout(() => releaseSlow(), 300);
      const [a, b] = await Promise.all([first, second]);
      expect(b.value).toEqual({ eventId: (a.value as { eventId: string }).eventId, replayed: true });
    }
    expect(entries - before).toBe(1);
  });
});
