import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { QUEUE_NEEDS_POSTGRES_MESSAGE } from '../agent.messages';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { AGENT_GOAL_QUEUE } from './agent-worker.constants';
import { AGENT_WORKER_MODULE_OPTIONS } from './agent-worker.module-definition';
import { AgentWorkerOptions } from './agent-worker.options';
import { InProcessGoalQueue } from './in-process-goal-queue';
import { PgBossConnection, PgBossGoalQueue } from './pg-boss-goal-queue';
import { resolveQueueOptions } from './resolve-queue-options';
import { resolveWorkerOptions } from './resolve-worker-options';
import { GoalQueue } from './worker.ports';

/** The PostgreSQL server of a TypeORM DataSource, for pg-boss; null for PGlite or another database. */
export function serverConnection(dataSource: DataSource | undefined): PgBossConnection | null {
  const options = dataSource?.options as (Record<string, unknown> & { type?: string }) | undefined;
  if (!options || options.type !== 'postgres' || options.driver !== undefined) return null;
  // With read replicas, TypeORM writes (and so stores the runs) on the primary: the queue goes there too.
  const master = (options.replication as { master?: unknown } | undefined)?.master;
  const o = master !== null && typeof master === 'object' ? (master as Record<string, unknown>) : options;
  if (typeof o.url === 'string' && o.url) return { connectionString: o.url, ...(o.ssl !== undefined ? { ssl: o.ssl } : {}) };
  if (typeof o.host !== 'string' && o.host !== undefined) return null;
  return {
    ...(o.host !== undefined ? { host: o.host as string } : {}),
    ...(typeof o.port === 'number' ? { port: o.port } : {}),
    ...(typeof o.database === 'string' ? { database: o.database } : {}),
    ...(typeof o.username === 'string' ? { user: o.username } : {}),
    ...(typeof o.password === 'string' ? { password: o.password } : {}),
    ...(o.ssl !== undefined ? { ssl: o.ssl } : {}),
  };
}

/** The worker's goal queue: in-process (default), pg-boss on the app's PostgreSQL (cluster mode), or yours. */
export const goalQueueProvider: Provider = {
  provide: AGENT_GOAL_QUEUE,
  inject: [AGENT_WORKER_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentWorkerOptions, dataSource?: DataSource): GoalQueue => {
    resolveWorkerOptions(raw); // the worker's own fields first: a boot error names the first wrong one
    const queue = resolveQueueOptions(raw && Object.hasOwn(raw, 'queue') ? raw.queue : undefined);
    if (queue.driver === 'in-process') return new InProcessGoalQueue();
    if (queue.driver !== 'pg-boss') return queue.driver;
    const connection = queue.connectionString ? { connectionString: queue.connectionString } : serverConnection(dataSource);
    if (!connection) throw new InvalidWorkerOptionsException('queue.connectionString', QUEUE_NEEDS_POSTGRES_MESSAGE);
    return new PgBossGoalQueue({ connection, ...queue });
  },
};
