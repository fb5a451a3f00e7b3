import { DataSource } from 'typeorm';
import { AGENT_WORKER_MODULE_OPTIONS } from './agent-worker.module-definition';
import { AgentWorkerOptions } from './agent-worker.options';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { goalQueueProvider, serverConnection } from './goal-queue.provider';
import { InProcessGoalQueue } from './in-process-goal-queue';
import { PgBossGoalQueue } from './pg-boss-goal-queue';
import { GoalQueue } from './worker.ports';

const factory = (goalQueueProvider as { useFactory: (o: unknown, ds?: unknown) => GoalQueue | null }).useFactory;
const pglite = { options: { type: 'postgres', driver: {} } } as unknown as DataSource;
const server = { options: { type: 'postgres', url: 'postgres://app@db:5432/app' } } as unknown as DataSource;

function refused(options: AgentWorkerOptions, dataSource?: DataSource): InvalidWorkerOptionsException {
  try {
    factory(options, dataSource);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidWorkerOptionsException);
    return e as InvalidWorkerOptionsException;
  }
  throw new Error('expected InvalidWorkerOptionsException');
}

describe('the goal queue of AgentWorkerModule.forRoot({ queue })', () => {
  it('injects with the module options', () => {
    expect((goalQueueProvider as { inject: unknown[] }).inject[0]).toBe(AGENT_WORKER_MODULE_OPTIONS);
  });

  it('is in-process by default, and yours when you pass a GoalQueue', () => {
    expect(factory({})).toBeInstanceOf(InProcessGoalQueue);
    expect(factory({ queue: { driver: 'in-process' } })).toBeInstanceOf(InProcessGoalQueue);
    const mine: GoalQueue = { start: async () => undefined, push: async () => undefined, stop: async () => undefined };
    expect(factory({ queue: { driver: mine } })).toBe(mine);
  });

  it("is pg-boss on the app's PostgreSQL server in cluster mode (the DataSource's URL, or the one given)", () => {
    expect(factory({ queue: { driver: 'pg-boss' } }, server)).toBeInstanceOf(PgBossGoalQueue);
    expect(factory({ queue: { driver: 'pg-boss', connectionString: 'postgres://x@h/db' } }, pglite)).toBeInstanceOf(PgBossGoalQueue);
  });

  it('refuses cluster mode on PGlite or without a DataSource, saying what to set', () => {
    for (const ds of [pglite, undefined]) {
      const e = refused({ queue: { driver: 'pg-boss' } }, ds);
      expect(e.field).toBe('queue.connectionString');
      expect(e.message).toMatch(/PostgreSQL server/);
      expect(e.message).toMatch(/queue\.connectionString/);
    }
  });

  it('names the field of a bad option at boot', () => {
    expect(refused({ concurrency: 0, queue: { driver: 'pg-boss' } }).field).toBe('worker.concurrency'); // the worker's fields first
    expect(refused({ queue: { driver: 'rabbit' as never } }).field).toBe('queue.driver');
    expect(refused({ queue: { driver: 'pg-boss', pollingIntervalSeconds: 0.1 } }, server).field).toBe('queue.pollingIntervalSeconds');
    expect(refused({ queue: { driver: 'pg-boss', schema: 'x; DROP TABLE y' } }, server).field).toBe('queue.schema');
    expect(refused({ queue: { driver: 'pg-boss', name: '' } }, server).field).toBe('queue.name');
    expect(refused({ queue: { driver: 'pg-boss', connectionString: 'mysql://x' } }, server).field).toBe('queue.connectionString');
    expect(refused({ queue: { driver: 'pg-boss', poolSize: 1 } }, server).field).toBe('queue.poolSize');
    expect(refused({ queue: { driver: 'pg-boss', notify: 'yes' as never } }, server).field).toBe('queue.notify');
    expect(refused({ queue: 'pg-boss' as never }).field).toBe('queue');
  });

  it("reads the server of a DataSource from its url or its fields, never from PGlite's", () => {
    expect(serverConnection(server)).toEqual({ connectionString: 'postgres://app@db:5432/app' });
    const fields = { options: { type: 'postgres', host: 'db', port: 5433, database: 'app', username: 'u', password: 'p' } };
    expect(serverConnection(fields as unknown as DataSource)).toEqual({
      host: 'db',
      port: 5433,
      database: 'app',
      user: 'u',
      password: 'p',
    });
    expect(serverConnection(pglite)).toBeNull();
    expect(serverConnection({ options: { type: 'mysql', host: 'db' } } as unknown as DataSource)).toBeNull();
    expect(serverConnection(undefined)).toBeNull();
  });
});
