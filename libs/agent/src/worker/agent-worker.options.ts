import type { StoreChoice } from '@zmodu/core';
import type { AgentQueueOptions } from './agent-queue.options';
import type { AgentRunRecord, AgentRunStore } from './worker.ports';

/** A listener of finished runs: the run record as stored (status succeeded or failed, answer, steps, error). */
export type AgentResultListener = (result: AgentRunRecord) => void | Promise<void>;

/** `AgentWorkerModule.forRoot(options)`: the AgentWorker. Every field has a default. */
export class AgentWorkerOptions {
  /** Goals run at once on this instance. */
  concurrency?: number = 4;
  /** Goals waiting on this instance (stored, not started) before `post` answers MailboxFullException. */
  mailboxSize?: number = 1000;
  /**
   * Goals one tenant may have waiting (in the run store: on every instance) before its posts answer MailboxFullException,
   * so that one tenant's flood leaves room for the others. Default: a quarter of mailboxSize; at most mailboxSize.
   */
  mailboxPerTenant?: number;
  /** How long a claimed run is held without a heartbeat before another start may take it over. */
  leaseMs?: number = 30_000;
  /** How often running leases are renewed (default: a third of leaseMs). */
  heartbeatMs?: number;
  /** At shutdown, how long running goals may still finish before they are aborted and stored as interrupted. */
  shutdownGraceMs?: number = 10_000;
  /**
   * Starts of one run (first try plus retries after its instance died) before it is marked failed. A run given back at
   * a graceful shutdown gets its start back (its maxAttempts grows by one, up to 100).
   */
  maxAttempts?: number = 3;
  /**
   * Runs one tenant may have waiting for a human at once (in the run store: on every instance). A run that would wait
   * past it ends `failed` at its proposals instead (they stay in the approval queue); a waiting run holds no slot, so
   * this bounds what a tenant keeps waiting, and what the sweep reads.
   */
  maxWaitingPerTenant?: number = 1000;
  /** Longest goal accepted, in characters. */
  maxGoalLength?: number = 8000;
  /** Where runs are stored: the app's TypeORM DataSource (default), this process's memory, or your store. */
  runStore?: StoreChoice<AgentRunStore> = 'typeorm';
  /** Called with each finished run, and with a run that starts to wait for a human (status `waiting`); errors are caught, logged and counted in `stats().handlerErrors`. */
  onResult?: AgentResultListener;
  /**
   * Where the goals wait: `{ driver: 'in-process' }` (the default) or, for several instances on one PostgreSQL,
   * `{ driver: 'pg-boss' }` (cluster mode): a goal posted on any instance may run on any, and the goals of an instance
   * that died are taken over by the others once their leases expire.
   */
  queue?: AgentQueueOptions;
}

/** The options with every default applied and every field checked. */
export type ResolvedAgentWorkerOptions = Required<Omit<AgentWorkerOptions, 'onResult' | 'queue'>> & Pick<AgentWorkerOptions, 'onResult'>;
