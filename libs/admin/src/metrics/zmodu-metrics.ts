import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { loadOptionalPeer } from '@zmodu/core';
import { RuntimeEvent, RuntimeEvents } from '@zmodu/guard';
import { OUTBOX_STORE, OutboxBacklog } from '@zmodu/outbox/internal';
import { OutboxStore } from '@zmodu/outbox';
import { SkillRegistry } from '@zmodu/skills';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, Metric } from 'prom-client';
import { METRICS_OPTIONS } from './metrics.constants';
import type { MetricsRegistry } from './metrics-registry';
import { MetricsTenantView, OVERFLOW_TENANT_LABEL, ResolvedMetricsOptions, UNKNOWN_SKILL_LABEL } from './metrics.options';

/** What a scrape may see: every series (true), or one tenant's own series. */
export type MetricsView = true | MetricsTenantView;

/** The label of the series that belong to one tenant. */
export const TENANT_LABEL = 'tenant';

/**
 * The application's Prometheus metrics, in a registry of its own (never prom-client's global one, so that building
 * the module twice in one process never meets "already registered"). Counted from the runtime's events
 * (RuntimeEvents of @zmodu/guard: every dispatch as the audit log records it, every token charge, every run's end,
 * every proposal verdict); the outbox gauges are read from the outbox store at scrape time. Counting never fails a
 * call: an error here is swallowed and logged (the first, then every 1000th).
 */
@Injectable()
export class ZmoduMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ZmoduMetrics');
  /** prom-client, an optional peer of @zmodu/admin, loaded when this module is built (see loadPromClient). */
  private readonly prom: typeof PromClient;
  /** The registry this application's metrics live in (prom-client's Registry; add yours to it); serve it with `scrape()`. */
  readonly registry: MetricsRegistry;
  private readonly toolCalls: Counter<'skill' | 'action' | 'outcome'>;
  private readonly denials: Counter<'cause'>;
  private readonly tokens: Counter<'tenant' | 'agent'>;
  private readonly runDuration: Histogram<'agent' | 'status'>;
  private readonly verdicts: Counter<'verdict'>;
  private readonly errors: Counter<'source'>;
  private readonly tenants = new Set<string>();
  private unsubscribe: (() => void) | null = null;
  /** The outbox backlog read of the scrape under way, shared by the gauges. */
  private outboxRead: Promise<OutboxBacklog | null> | null = null;
  private errorCount = 0;

  constructor(
    @Inject(METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    private readonly events: RuntimeEvents,
    @Optional() private readonly skills?: SkillRegistry,
    @Optional() @Inject(OUTBOX_STORE) private readonly outbox?: OutboxStore,
  ) {
    const prom = (this.prom = loadPromClient());
    this.registry = new prom.Registry();
    const p = options.prefix;
    const registers = [this.registry];
    this.toolCalls = new prom.Counter({
      name: `${p}tool_calls_total`,
      help: 'Tool calls through the dispatcher, allowed or not, by skill, action class and outcome.',
      labelNames: ['skill', 'action', 'outcome'],
      registers,
    });
    this.denials = new prom.Counter({
      name: `${p}tool_denials_total`,
      help: 'Tool calls refused, by cause (guard causes, missing_permission, invalid_arguments, tenant_required, quota_unavailable).',
      labelNames: ['cause'],
      registers,
    });
    this.tokens = new prom.Counter({
      name: `${p}tokens_total`,
      help: `Tokens charged to the quota (model turns and tool calls), by tenant and agent (at most ${options.maxTenantLabels} tenants, then "${OVERFLOW_TENANT_LABEL}").`,
      labelNames: [TENANT_LABEL, 'agent'],
      registers,
    });
    this.runDuration = new prom.Histogram({
      name: `${p}run_duration_seconds`,
      help: 'Agent run duration, by agent and status (the stop reason: final, max_steps, budget_exhausted, ...).',
      labelNames: ['agent', 'status'],
      buckets: [...options.runDurationBuckets],
      registers,
    });
    this.verdicts = new prom.Counter({
      name: `${p}proposal_verdicts_total`,
      help: 'Proposal pipeline verdicts (submissions, human decisions, executions), by verdict.',
      labelNames: ['verdict'],
      registers,
    });
    this.outboxGauges(p);
    // After the outbox gauges: a scrape collects in this order, all at once; this one waits for their read to settle.
    const outboxRead = () => this.outboxRead;
    this.errors = new prom.Counter({
      name: `${p}metrics_errors_total`,
      help: 'Errors of the metrics themselves (swallowed: they never fail a call or a scrape), by source.',
      labelNames: ['source'],
      registers,
      async collect() {
        await outboxRead();
      },
    });
    if (options.defaultMetrics) prom.collectDefaultMetrics({ register: this.registry, prefix: p });
  }

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => this.observe(event));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** The Prometheus content type of `scrape()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The metrics in the Prometheus text exposition format: every series (`true`, the default: a platform credential),
   * or a tenant's view, which holds only the series labelled `tenant="<tenantId>"` (the token counter, and any metric
   * of yours in this registry with a `tenant` label): no other tenant's name or usage, and none of the series summed
   * over every tenant. The overflow label (`other`) belongs to no tenant: a tenant of that name sees none of it.
   */
  scrape(view: MetricsView = true): Promise<string> {
    return view === true ? this.registry.metrics() : this.tenantScrape(view.tenantId);
  }

  /** The series of one tenant, written by prom-client itself from a registry of filtered views of ours. */
  private async tenantScrape(tenantId: string): Promise<string> {
    const view = new this.prom.Registry();
    for (const metric of this.registry.getMetricsAsArray()) {
      const labelNames = (metric as { labelNames?: unknown }).labelNames;
      if (!Array.isArray(labelNames) || !labelNames.includes(TENANT_LABEL)) continue;
      const whole = await (metric as unknown as Metric).get();
      const values =
        tenantId === OVERFLOW_TENANT_LABEL
          ? []
          : whole.values.filter((v) => Object.hasOwn(v.labels, TENANT_LABEL) && v.labels[TENANT_LABEL] === tenantId);
      const filtered = { name: whole.name, help: whole.help, type: whole.type, get: async () => ({ ...whole, values }) };
      view.registerMetric(filtered as unknown as Metric);
    }
    return view.metrics();
  }

  /** Count one runtime event; never throws. */
  observe(event: RuntimeEvent): void {
    try {
      switch (event.type) {
        case 'tool_call': {
          const e = event.entry;
          this.toolCalls.inc({ skill: this.skillLabel(e.skill), action: e.action, outcome: e.outcome });
          if (e.cause !== null) this.denials.inc({ cause: e.cause });
          break;
        }
        case 'tokens':
          this.tokens.inc({ tenant: this.tenantLabel(event.tenantId), agent: event.agent }, event.tokens);
          break;
        case 'run':
          this.runDuration.observe({ agent: event.agent, status: event.status }, Math.max(0, event.durationMs) / 1000);
          break;
        case 'proposal_verdict':
          this.verdicts.inc({ verdict: event.verdict });
          break;
      }
    } catch (err) {
      this.failed('observe', err);
    }
  }

  /** A skill the registry knows by its name; any other name (a model may send anything) as `unknown`. */
  private skillLabel(skill: string): string {
    return !this.skills || this.skills.has(skill) ? skill : UNKNOWN_SKILL_LABEL;
  }

  /** The tenant as its own label value while fewer than maxTenantLabels were seen, then `other`. */
  private tenantLabel(tenant: string): string {
    if (this.tenants.has(tenant)) return tenant;
    if (this.tenants.size >= this.options.maxTenantLabels) return OVERFLOW_TENANT_LABEL;
    this.tenants.add(tenant);
    return tenant;
  }

  /**
   * Outbox gauges, read from the store when scraped: one read per scrape, shared by the gauges (prom-client collects
   * them at once). A store that cannot answer leaves them unknown (NaN, or no series) and counts an error; the scrape
   * still answers.
   */
  private outboxGauges(p: string): void {
    const outbox = this.outbox;
    if (!outbox?.backlog) return;
    const read = (): Promise<OutboxBacklog | null> =>
      (this.outboxRead ??= Promise.resolve()
        .then(() => (outbox as Required<OutboxStore>).backlog())
        .catch((err: unknown) => {
          this.failed('outbox', err);
          return null;
        })
        .finally(() => {
          this.outboxRead = null;
        }));
    const gauge = <L extends string>(name: string, help: string, labelNames: L[], set: (g: Gauge<L>, b: OutboxBacklog) => void) =>
      new this.prom.Gauge<L>({
        name: `${p}${name}`,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          this.reset();
          const b = await read();
          if (b) set(this, b);
          else if (labelNames.length === 0) (this as Gauge).set(Number.NaN); // unknown, not 0
        },
      });
    gauge('outbox_backlog', 'Outbox events not delivered yet, by status (pending, delivering).', ['status'], (g, b) => {
      g.set({ status: 'pending' }, b.pending);
      g.set({ status: 'delivering' }, b.delivering);
    });
    gauge('outbox_dead_letters', 'Outbox events whose attempts are used up (until an admin retries them).', [], (g, b) => g.set(b.dead));
    gauge('outbox_oldest_pending_age_seconds', 'Age of the oldest outbox event still pending or delivering (0 when none).', [], (g, b) =>
      g.set(b.oldestPendingAt ? Math.max(0, (Date.now() - b.oldestPendingAt.getTime()) / 1000) : 0),
    );
  }

  private failed(source: string, err: unknown): void {
    this.errorCount++;
    try {
      this.errors.inc({ source });
    } catch {
      // nothing more to do: counted in errorCount
    }
    if (this.errorCount === 1 || this.errorCount % 1000 === 0)
      this.logger.error(
        `metrics ${source} failed (swallowed; ${this.errorCount} errors in all): ${(err as Error)?.message ?? String(err)}`,
      );
  }
}

/**
 * prom-client, loaded when the metrics are configured (MetricsModule builds ZmoduMetrics at boot), so that an
 * application without metrics need not install it. Only its types are imported at the top of this file.
 */
function loadPromClient(): typeof PromClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return loadOptionalPeer('prom-client', 'the metrics (MetricsModule)', () => require('prom-client') as typeof PromClient, {
    install: 'prom-client@^15',
  });
}
