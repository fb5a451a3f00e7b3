import { embeddedDataSourceOptions, openEmbeddedDatabase, serverDataSourceOptions } from '@zmodu/db';
import type { AgentBudget } from '@zmodu/agent';
import { EdgeOptions } from './edge/edge.options';
import { ConfigError } from './config-error';
import { modelFromEnv, SampleModel } from './model';
import { SampleAppOptions, SampleLogging } from './sample.options';

export { ConfigError } from './config-error';

export const DEV_JWT_SECRET = 'zmodu-development-secret-do-not-use-in-production';

/**
 * Options from the environment: DATABASE_URL (else PGlite in ZMODU_DATA_DIR, default .data/pglite),
 * ZMODU_JWT_SECRET (or ZMODU_DEV=1), the edge limits (see edgeFromEnv), the trader's budget and the model (see modelFromEnv).
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): SampleAppOptions & { model: SampleModel } {
  return {
    dataSource: async () => {
      if (env.DATABASE_URL) return serverDataSourceOptions(env.DATABASE_URL);
      const dataDir = env.ZMODU_DATA_DIR || '.data/pglite';
      return embeddedDataSourceOptions(await openEmbeddedDatabase({ dataDir }));
    },
    jwtSecret: jwtSecretFromEnv(env),
    edge: edgeFromEnv(env),
    traderBudget: traderBudgetFromEnv(env),
    model: modelFromEnv(env),
    ...queueFromEnv(env),
    ...workerFromEnv(env),
    ...metricsFromEnv(env),
    ...mcpAuthorizationFromEnv(env),
  };
}

/**
 * ZMODU_MCP_RESOURCE (the URL clients reach /mcp at, e.g. https://desk.example.com/mcp) and
 * ZMODU_MCP_AUTHORIZATION_SERVERS (comma-separated issuer URLs): MCP authorization of /mcp, both or neither.
 */
export function mcpAuthorizationFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<SampleAppOptions, 'mcpAuthorization'> {
  const resource = env.ZMODU_MCP_RESOURCE?.trim();
  const servers = (env.ZMODU_MCP_AUTHORIZATION_SERVERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!resource && servers.length === 0) return {};
  if (!resource || servers.length === 0)
    throw new ConfigError(
      'MCP authorization needs both ZMODU_MCP_RESOURCE (the URL of /mcp as clients reach it) and ZMODU_MCP_AUTHORIZATION_SERVERS (comma-separated issuer URLs); set both or neither.',
    );
  return { mcpAuthorization: { resource, authorizationServers: servers } };
}

/**
 * ZMODU_WORKER_LEASE_MS: the lease of a background run (default 30000). A run of an instance that died is taken up again
 * within two leases of its last heartbeat, by this instance restarted or by another one of the cluster.
 */
export function workerFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<SampleAppOptions, 'worker'> {
  const raw = env.ZMODU_WORKER_LEASE_MS;
  if (raw === undefined || raw === '') return {};
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 100 || Number(raw) > 3_600_000)
    throw new ConfigError(`ZMODU_WORKER_LEASE_MS must be a whole number of milliseconds from 100 to 3600000 (got "${raw}").`);
  return { worker: { leaseMs: Number(raw) } };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** LOG_LEVEL: pino's level of the JSON logs the server writes on stdout (default info); main.ts reads it. */
export function loggingFromEnv(env: NodeJS.ProcessEnv = process.env): SampleLogging {
  const level = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${level}").`);
  return { level };
}

/**
 * The scrape token of GET /metrics: ZMODU_METRICS_TOKEN (at least 24 non-blank characters), the platform credential:
 * Prometheus sends it as a bearer token, needs no JWT and sees every series; a JWT carrying admin:metrics sees only its
 * tenant's series, with or without it.
 */
export function metricsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<SampleAppOptions, 'metrics'> {
  const token = env.ZMODU_METRICS_TOKEN;
  if (token === undefined || token === '') return {};
  if (!/^[\x21-\x7e]{24,512}$/.test(token))
    throw new ConfigError('ZMODU_METRICS_TOKEN must be 24 to 512 printable characters without spaces (e.g. openssl rand -hex 24).');
  return { metrics: { token } };
}

/**
 * Cluster mode from the environment: ZMODU_QUEUE=pg-boss puts the goals of POST /agents/:name/goals in a pg-boss
 * queue on the PostgreSQL of DATABASE_URL, so several instances of the sample share them ('in-process', the default,
 * keeps them in this process).
 */
export function queueFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<SampleAppOptions, 'queue'> {
  const driver = env.ZMODU_QUEUE;
  if (driver === undefined || driver === '' || driver === 'in-process') return {};
  if (driver !== 'pg-boss') throw new ConfigError(`ZMODU_QUEUE must be 'in-process' (the default) or 'pg-boss' (got "${driver}").`);
  if (!env.DATABASE_URL)
    throw new ConfigError(
      'ZMODU_QUEUE=pg-boss (several instances sharing the goals) needs DATABASE_URL: a PostgreSQL server every instance reaches (the embedded PGlite lives in one process).',
    );
  return { queue: { driver: 'pg-boss' } };
}

/**
 * Whether the server serves GET /docs and /docs-json (the OpenAPI document, Swagger UI): ZMODU_DOCS=1 yes, ZMODU_DOCS=0
 * no; unset, only in development (ZMODU_DEV=1): a production server does not publish its API map unless asked to.
 */
export function docsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.ZMODU_DOCS;
  if (raw === undefined || raw === '') return isDevMode(env);
  if (raw !== '0' && raw !== '1') throw new ConfigError(`ZMODU_DOCS must be 1 (serve /docs) or 0 (do not) (got "${raw}").`);
  return raw === '1';
}

/** The development switch: `ZMODU_DEV=1` allows the public development secret (local development, the demo, tests). */
export function isDevMode(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.ZMODU_DEV === '1';
}

/**
 * The HS256 secret: ZMODU_JWT_SECRET, at least 32 non-blank characters. Unset, the server refuses
 * to start unless ZMODU_DEV=1, which uses the public development secret (with a warning).
 */
export function jwtSecretFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env.ZMODU_JWT_SECRET;
  if (secret !== undefined && secret !== '') {
    if (secret.replace(/\s/g, '').length < 32)
      throw new ConfigError('ZMODU_JWT_SECRET must have at least 32 non-blank characters (e.g. openssl rand -base64 48).');
    return secret;
  }
  if (!isDevMode(env))
    throw new ConfigError(
      'ZMODU_JWT_SECRET is not set: set it to a secret of 32+ non-blank characters (e.g. openssl rand -base64 48), or set ZMODU_DEV=1 for local development with the public development secret.',
    );
  // stderr, so that `TOKEN=$(npm run -s token)` captures only the token.
  process.stderr.write(
    'warning: ZMODU_JWT_SECRET is not set and ZMODU_DEV=1: using the public development secret. Never do this outside local development.\n',
  );
  return DEV_JWT_SECRET;
}

/**
 * Edge limits from the environment: ZMODU_RATE_LIMIT (requests per caller per window), ZMODU_RATE_WINDOW_MS,
 * ZMODU_MAX_TOKEN_LIFETIME_S.
 */
export function edgeFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<EdgeOptions> {
  const edge: Partial<EdgeOptions> = {};
  const read = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name} must be a whole number of at least 1 (got "${raw}").`);
    return Number(raw);
  };
  const limit = read('ZMODU_RATE_LIMIT');
  const window = read('ZMODU_RATE_WINDOW_MS');
  const lifetime = read('ZMODU_MAX_TOKEN_LIFETIME_S');
  if (limit !== undefined) edge.rateLimit = limit;
  if (window !== undefined) edge.rateWindowMs = window;
  if (lifetime !== undefined) edge.maxTokenLifetimeSeconds = lifetime;
  return edge;
}

/**
 * The trader's fair-use budget from the environment: ZMODU_TRADER_TOKENS_PER_DAY (the tenant's daily
 * tokens with the trader) and ZMODU_TRADER_USER_SHARE (the fraction one user may spend, 0 < share <= 1).
 */
export function traderBudgetFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<AgentBudget> {
  const budget: { tokensPerPeriod?: number; userShare?: number } = {};
  const perDay = env.ZMODU_TRADER_TOKENS_PER_DAY;
  if (perDay !== undefined && perDay !== '') {
    if (!/^\d{1,12}$/.test(perDay) || Number(perDay) < 1)
      throw new ConfigError(`ZMODU_TRADER_TOKENS_PER_DAY must be a whole number of at least 1 (got "${perDay}").`);
    budget.tokensPerPeriod = Number(perDay);
  }
  const share = env.ZMODU_TRADER_USER_SHARE;
  if (share !== undefined && share !== '') {
    const value = /^(0|1)?(\.\d{1,6})?$/.test(share) ? Number(share) : NaN;
    if (!(value > 0 && value <= 1))
      throw new ConfigError(`ZMODU_TRADER_USER_SHARE must be a fraction above 0 and at most 1, such as 0.2 (got "${share}").`);
    budget.userShare = value;
  }
  return budget;
}

export function databaseDescription(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${env.ZMODU_DATA_DIR || '.data/pglite'}`;
}
