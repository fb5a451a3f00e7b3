import { ownOptions } from '@zmodu/core';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { AgentQueueOptions, ResolvedAgentQueueOptions } from './agent-queue.options';
import { GoalQueue } from './worker.ports';

const QUEUE_METHODS: readonly (keyof GoalQueue)[] = ['start', 'push', 'stop'];
/** A PostgreSQL identifier we create (schema) or a pg-boss queue name: letters, digits, underscores. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;

/** The queue options with defaults merged once and every field checked; a boot error names the field. */
export function resolveQueueOptions(raw: AgentQueueOptions | undefined | null): ResolvedAgentQueueOptions {
  if (raw === undefined || raw === null) return { ...(new AgentQueueOptions() as Required<AgentQueueOptions>), driver: 'in-process' };
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new InvalidWorkerOptionsException('queue', "expected an object such as { driver: 'pg-boss' }");
  const merged = Object.assign(new AgentQueueOptions(), ownOptions(raw)) as Record<string, unknown>;
  const driver = merged.driver;
  const isQueue =
    driver !== null &&
    typeof driver === 'object' &&
    QUEUE_METHODS.every((m) => typeof (driver as Record<string, unknown>)[m] === 'function');
  if (driver !== 'in-process' && driver !== 'pg-boss' && !isQueue)
    throw new InvalidWorkerOptionsException(
      'queue.driver',
      `expected 'in-process', 'pg-boss' or a GoalQueue (${QUEUE_METHODS.join(', ')})`,
    );
  const connectionString = merged.connectionString;
  if (connectionString !== undefined && (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)))
    throw new InvalidWorkerOptionsException('queue.connectionString', 'expected a URL such as postgres://user:password@host:5432/database');
  for (const field of ['schema', 'name'] as const)
    if (typeof merged[field] !== 'string' || !NAME.test(merged[field]))
      throw new InvalidWorkerOptionsException(
        `queue.${field}`,
        `expected letters, digits and underscores (at most 50), got ${JSON.stringify(merged[field])}`,
      );
  const polling = merged.pollingIntervalSeconds;
  if (typeof polling !== 'number' || !Number.isFinite(polling) || polling < 0.5 || polling > 3600)
    throw new InvalidWorkerOptionsException(
      'queue.pollingIntervalSeconds',
      `expected a number of seconds from 0.5 to 3600, got ${String(polling)}`,
    );
  if (typeof merged.notify !== 'boolean') throw new InvalidWorkerOptionsException('queue.notify', 'expected true or false');
  const poolSize = merged.poolSize;
  if (poolSize !== undefined && (typeof poolSize !== 'number' || !Number.isInteger(poolSize) || poolSize < 2 || poolSize > 200))
    throw new InvalidWorkerOptionsException('queue.poolSize', `expected an integer from 2 to 200, got ${String(poolSize)}`);
  return {
    driver: driver as ResolvedAgentQueueOptions['driver'],
    ...(connectionString !== undefined ? { connectionString: connectionString as string } : {}),
    schema: merged.schema as string,
    name: merged.name as string,
    pollingIntervalSeconds: polling,
    notify: merged.notify,
    ...(poolSize !== undefined ? { poolSize: poolSize as number } : {}),
  };
}
