import type { GoalQueue } from './worker.ports';

/**
 * `AgentWorkerModule.forRoot({ queue })`: where posted goals wait. `'in-process'` (the default) keeps the mailbox in this
 * process: goals run on the instance that stored them (or on the next start of any instance, from the run store).
 * `'pg-boss'` is cluster mode: the mailbox is a pg-boss queue on your PostgreSQL, so a goal posted on one instance
 * may run on any, and the goals of an instance that died are taken over by the others within the lease bound.
 */
export class AgentQueueOptions {
  driver?: 'in-process' | 'pg-boss' | GoalQueue = 'in-process';
  /**
   * The PostgreSQL of pg-boss (`postgres://user:pass@host:5432/db`). Default: the server of the app's TypeORM
   * DataSource. Use the same database as the run store: the runs' leases and the queue then fail over together.
   */
  connectionString?: string;
  /**
   * The schema of pg-boss's tables, created at the first start. pg-boss 12 cannot migrate the tables of pg-boss 10
   * (the schema `zmodu_boss` of earlier versions): a schema of pg-boss 10 is refused at boot, saying so.
   */
  schema?: string = 'zmodu_boss_v12';
  /** The pg-boss queue of the goals (one per application sharing the database). */
  name?: string = 'zmodu_agent_goals';
  /**
   * How often an idle slot asks for goals when no notification came (pg-boss's minimum is 0.5 s). Goals posted on
   * any instance also wake every instance's idle slots at once through LISTEN/NOTIFY; polling is the fallback.
   */
  pollingIntervalSeconds?: number = 1;
  /**
   * Wake this instance's idle slots when any instance posts goals: pg-boss's LISTEN/NOTIFY (`useListenNotify`, one
   * more connection). Off: no LISTEN connection here, the slots poll (the queue's inserts still notify the others).
   */
  notify?: boolean = true;
  /** Connections of pg-boss's pool on this instance (default: the worker's concurrency + 2). */
  poolSize?: number;
}

/** The queue options with defaults applied and every field checked. */
export interface ResolvedAgentQueueOptions {
  readonly driver: 'in-process' | 'pg-boss' | GoalQueue;
  readonly connectionString?: string;
  readonly schema: string;
  readonly name: string;
  readonly pollingIntervalSeconds: number;
  readonly notify: boolean;
  readonly poolSize?: number;
}
