import type { OutboxHealthLimits } from '@zmodu/admin';
import type { AgentBudget, AgentQueueOptions, AgentSpec, AgentWorkerOptions } from '@zmodu/agent';
import type { DestinationStream } from 'pino';
import type { DataSourceOptions } from 'typeorm';
import type { EdgeOptions } from './edge/edge.options';
import type { SampleModel } from './model';

export interface SampleAppOptions {
  /** Builds the TypeORM connection options (embedded PGlite or a PostgreSQL server). */
  readonly dataSource: () => Promise<DataSourceOptions>;
  /** HS256 secret that signs and verifies bearer tokens. */
  readonly jwtSecret: string;
  /** Seed the demo desks (tenants acme and globex) at boot. Default true. */
  readonly seed?: boolean;
  /** Token rules, body limits and the rate limit at the HTTP edge (see EdgeOptions for the defaults). */
  readonly edge?: Partial<EdgeOptions>;
  /** Overrides of the trader's budget (default TRADER_BUDGET: 20,000 tokens a run, 1,000,000 a day per tenant, a fifth of it per user). */
  readonly traderBudget?: Partial<AgentBudget>;
  /** Agents beside the sample's own (the demo adds `junior`, whose policy may not execute). Default: none. */
  readonly extraAgents?: readonly AgentSpec[];
  /** The model every agent runs on (see modelFromEnv). Default: each agent's scripted model, offline. */
  readonly model?: Pick<SampleModel, 'provider'>;
  /** Overrides of the AgentWorker behind POST /agents/:name/goals (default: the TypeORM run store, 4 slots). */
  readonly worker?: Partial<AgentWorkerOptions>;
  /** Where posted goals wait (default in-process); `{ driver: 'pg-boss' }` for several instances on one PostgreSQL. */
  readonly queue?: AgentQueueOptions;
  /**
   * Structured JSON logs (pino-http per application, logging/json-logs.module.ts, with zmoduPinoOptions: the run on every line, secrets masked). Default: silent, for
   * tests and embedding; the server (main.ts) logs at LOG_LEVEL (default info) to stdout (see loggingFromEnv).
   */
  readonly logging?: SampleLogging;
  /**
   * GET /metrics (Prometheus). `token` is the platform credential: a scraper sends `Authorization: Bearer <token>`
   * (what Prometheus sends with `authorization: { credentials_file }`), needs no JWT and sees every series; a JWT
   * carrying admin:metrics sees only its tenant's series.
   */
  readonly metrics?: { readonly token?: string };
  /** The limits of the outbox check of GET /health/ready (default: SAMPLE_OUTBOX_HEALTH, degraded rather than down). */
  readonly health?: { readonly outbox?: OutboxHealthLimits };
}

export interface SampleLogging {
  /** pino's level: fatal, error, warn, info, debug, trace or silent. */
  readonly level: string;
  /** Where the lines go (default: stdout). */
  readonly destination?: DestinationStream;
}

export const SAMPLE_OPTIONS = Symbol('SAMPLE_OPTIONS');
