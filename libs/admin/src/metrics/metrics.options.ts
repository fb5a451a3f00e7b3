import { ownOptions } from '@zmodu/core';
import { InvalidMetricsOptionsException } from '../exceptions/invalid-metrics-options.exception';

/** Run durations (seconds) the histogram counts by default: agent runs take from a second to minutes. */
export const DEFAULT_RUN_DURATION_BUCKETS: readonly number[] = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Distinct tenant label values of the token counter, by default; later tenants are counted under `other`. */
export const DEFAULT_MAX_TENANT_LABELS = 1000;
/** The label value of tenants past `maxTenantLabels`, and of skills the registry does not know. */
export const OVERFLOW_TENANT_LABEL = 'other';
export const UNKNOWN_SKILL_LABEL = 'unknown';

/** What `authorize` says of a scrape: every series (true), one tenant's own series, or none (false: 403). */
export type MetricsAccess = boolean | MetricsTenantView;

/** A tenant's view of the metrics: only the series labelled with its tenant. */
export interface MetricsTenantView {
  readonly tenantId: string;
}

/** Options of `MetricsModule.forRoot` / `forRootAsync` (where it is served are the module's extras: see MetricsModuleExtras). */
export class MetricsModuleOptions {
  /** Prepended to every metric name, default metrics included. Default 'zmodu_'. */
  prefix?: string = 'zmodu_';
  /** Also collect prom-client's default Node.js metrics (CPU, memory, event loop lag, GC) into this registry. Default false. */
  defaultMetrics?: boolean = false;
  /**
   * Most distinct `tenant` label values of the token counter (the one label a caller names). Past it, tokens of
   * new tenants are counted under `tenant="other"`. Default 1000.
   */
  maxTenantLabels?: number = DEFAULT_MAX_TENANT_LABELS;
  /** Upper bounds (seconds, ascending) of the run duration histogram. Default DEFAULT_RUN_DURATION_BUCKETS. */
  runDurationBuckets?: readonly number[] = DEFAULT_RUN_DURATION_BUCKETS;
  /**
   * Who may scrape, and what: called with the request. `true`: every series (a platform credential, such as a scrape
   * token); `{ tenantId }`: that tenant's own series only (those labelled `tenant="<tenantId>"`: a tenant's user never
   * sees another tenant's names or usage, nor the series summed over every tenant); `false` or anything else: 403. An
   * HttpException it throws keeps its status (a 401 for a bad token); any other rejection answers 403. Default: anyone
   * who reaches the route sees every series (Prometheus scrapers usually send no credentials: keep the route on an
   * internal network, or check a static bearer token here).
   */
  authorize?: ((request: unknown) => MetricsAccess | Promise<MetricsAccess>) | null = null;
}

/** Where MetricsModule serves the registry. They decide its controller, so they are given beside the options. */
export interface MetricsModuleExtras {
  /** The route of the Prometheus text exposition. false: no route (serve `ZmoduMetrics.scrape()` yourself). Default '/metrics'. */
  path?: string | false;
  /**
   * Decorators applied to the metrics controller class, e.g. your app's `@Public()` (so that a global auth guard
   * lets the scraper through) or `@SkipThrottle()`. Default none.
   */
  decorators?: readonly ClassDecorator[];
}

export type ResolvedMetricsOptions = Required<MetricsModuleOptions>;

const METRIC_NAME_PREFIX = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Merge the given options over the defaults, once, and check them: a wrong option fails the boot, naming it. */
export function resolveMetricsOptions(raw: Partial<MetricsModuleOptions> | undefined): ResolvedMetricsOptions {
  const o = Object.assign(new MetricsModuleOptions(), ownOptions(raw)) as ResolvedMetricsOptions;
  if (typeof o.prefix !== 'string' || (o.prefix !== '' && !METRIC_NAME_PREFIX.test(o.prefix)))
    throw new InvalidMetricsOptionsException('prefix', 'must be letters, digits, _ and : (not starting with a digit), e.g. "zmodu_"');
  if (typeof o.defaultMetrics !== 'boolean') throw new InvalidMetricsOptionsException('defaultMetrics', 'must be true or false');
  if (!Number.isInteger(o.maxTenantLabels) || o.maxTenantLabels < 1 || o.maxTenantLabels > 1_000_000)
    throw new InvalidMetricsOptionsException('maxTenantLabels', 'must be a whole number from 1 to 1000000');
  const b = o.runDurationBuckets;
  if (
    !Array.isArray(b) ||
    b.length === 0 ||
    b.some((x, i) => typeof x !== 'number' || !Number.isFinite(x) || x <= 0 || (i > 0 && x <= b[i - 1]))
  )
    throw new InvalidMetricsOptionsException(
      'runDurationBuckets',
      'must be positive numbers of seconds in ascending order, e.g. [1, 10, 60]',
    );
  if (o.authorize !== null && typeof o.authorize !== 'function')
    throw new InvalidMetricsOptionsException('authorize', 'must be a function (request) => boolean, or null');
  return o;
}

/** The route of the extras, checked: a path that starts with '/', or false. */
export function resolveMetricsPath(path: string | false | undefined): string | false {
  if (path === undefined) return '/metrics';
  if (path === false) return false;
  if (typeof path !== 'string' || !path.startsWith('/') || /\s/.test(path))
    throw new InvalidMetricsOptionsException('path', "must be a route starting with '/' (e.g. '/metrics'), or false for none");
  return path;
}
