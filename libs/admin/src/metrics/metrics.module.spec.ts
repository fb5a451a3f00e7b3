import { Global, INestApplication, Module, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GuardModule, TokenQuota } from '@zmodu/guard';
import { OUTBOX_STORE } from '@zmodu/outbox/internal';
import { SkillsModule } from '@zmodu/skills';
import { register as globalRegistry } from 'prom-client';
import request from 'supertest';
import { parsePrometheusText, sampleValue } from '../__fixtures__/prometheus-text';
import { InvalidMetricsOptionsException } from '../exceptions/invalid-metrics-options.exception';
import { MetricsModule } from './metrics.module';
import { MetricsModuleExtras, MetricsModuleOptions } from './metrics.options';
import { ZmoduMetrics } from './zmodu-metrics';

/** An outbox store whose backlog read fails (the database is away): the collaborator the metrics must survive. */
@Global()
@Module({
  providers: [{ provide: OUTBOX_STORE, useValue: { backlog: () => Promise.reject(new Error('connection refused')) } }],
  exports: [OUTBOX_STORE],
})
class UnreachableOutboxStore {}

describe('MetricsModule', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  async function boot(options: MetricsModuleOptions & MetricsModuleExtras = {}, extra: unknown[] = []): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        MetricsModule.forRoot(options),
        ...(extra as []),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    return app;
  }

  const scrape = async (app: INestApplication) => parsePrometheusText(await app.get(ZmoduMetrics).scrape());

  it('builds twice in one process, default Node metrics included, each app with its own registry (never the global one)', async () => {
    const first = await boot({ defaultMetrics: true });
    const second = await boot({ defaultMetrics: true });
    await first.get(TokenQuota).chargeQuietly({ tenantId: 't1', agent: 'a' }, 5);
    await second.get(TokenQuota).chargeQuietly({ tenantId: 't1', agent: 'a' }, 9);
    const [a, b] = [await scrape(first), await scrape(second)];
    expect(sampleValue(a, 'zmodu_tokens_total', { tenant: 't1', agent: 'a' })).toBe(5);
    expect(sampleValue(b, 'zmodu_tokens_total', { tenant: 't1', agent: 'a' })).toBe(9);
    expect(a.some((s) => s.name === 'zmodu_process_cpu_user_seconds_total')).toBe(true);
    expect(a.some((s) => s.name === 'zmodu_nodejs_heap_size_used_bytes')).toBe(true);
    expect(globalRegistry.getMetricsAsArray().filter((m) => m.name.startsWith('zmodu_'))).toEqual([]);
    expect(first.get(ZmoduMetrics).registry).not.toBe(second.get(ZmoduMetrics).registry);
  });

  it('takes a prefix; without defaultMetrics there are no Node metrics', async () => {
    const app = await boot({ prefix: 'desk_' });
    await app.get(TokenQuota).chargeQuietly({ tenantId: 't1', agent: 'a' }, 3);
    const samples = await scrape(app);
    expect(sampleValue(samples, 'desk_tokens_total', { tenant: 't1', agent: 'a' })).toBe(3);
    expect(samples.some((s) => s.name.startsWith('zmodu_'))).toBe(false);
    expect(samples.some((s) => s.name.includes('process_cpu'))).toBe(false);
  });

  it('bounds the tenant label values: past maxTenantLabels, new tenants are counted under "other"', async () => {
    const app = await boot({ maxTenantLabels: 2 });
    const quota = app.get(TokenQuota);
    for (const [tenant, n] of [
      ['t1', 1],
      ['t2', 2],
      ['t3', 4],
      ['t4', 8],
      ['t1', 16],
    ] as const)
      await quota.chargeQuietly({ tenantId: tenant, agent: 'a' }, n);
    const tokens = (await scrape(app)).filter((s) => s.name === 'zmodu_tokens_total');
    expect(Object.fromEntries(tokens.map((s) => [s.labels.tenant, s.value]))).toEqual({ t1: 17, t2: 2, other: 12 });
  });

  it('serves GET /metrics by default, at the path given, or nowhere with path: false', async () => {
    const plain = await boot();
    await request(plain.getHttpServer()).get('/metrics').expect(200);
    const moved = await boot({ path: '/internal/prometheus' });
    await request(moved.getHttpServer()).get('/metrics').expect(404);
    const res = await request(moved.getHttpServer()).get('/internal/prometheus').expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('# TYPE zmodu_tool_calls_total counter');
    parsePrometheusText(res.text);
    const none = await boot({ path: false });
    await request(none.getHttpServer()).get('/metrics').expect(404);
    expect(await none.get(ZmoduMetrics).scrape()).toContain('zmodu_tool_calls_total');
  });

  it("shows a tenant's user only its tenant's series, every series only to a platform credential (attack: admin:metrics of one tenant reads every tenant's names and usage)", async () => {
    const app = await boot({
      authorize: (req) => {
        const auth = (req as { headers: Record<string, string | undefined> }).headers.authorization;
        if (auth === 'Bearer platform') return true;
        if (auth === 'Bearer acme-admin') return { tenantId: 'acme' };
        if (auth === 'Bearer other-admin') return { tenantId: 'other' };
        if (auth === 'Bearer look-alike') return { tenantId: 'acme\u200b' };
        if (auth === 'Bearer expired') throw new UnauthorizedException('the token has expired');
        return false;
      },
      maxTenantLabels: 2,
    });
    const quota = app.get(TokenQuota);
    for (const [tenant, n] of [
      ['acme', 5],
      ['globex-secret-customer', 7],
      ['third', 11],
    ] as const)
      await quota.chargeQuietly({ tenantId: tenant, agent: 'trader' }, n);
    app.get(ZmoduMetrics).observe({ type: 'run', agent: 'trader', status: 'final', durationMs: 10, tenantId: 'globex-secret-customer' });
    const get = (auth: string) => request(app.getHttpServer()).get('/metrics').set('authorization', auth);

    const tenant = await get('Bearer acme-admin').expect(200);
    expect(tenant.text).not.toContain('globex');
    expect(tenant.text).not.toContain('tenant="other"');
    const samples = parsePrometheusText(tenant.text);
    expect(samples).toEqual([{ name: 'zmodu_tokens_total', labels: { tenant: 'acme', agent: 'trader' }, value: 5 }]);
    // The series summed over every tenant (tool calls, runs, outbox) are not a tenant's either.
    expect(tenant.text).not.toContain('zmodu_run_duration_seconds');

    const platform = parsePrometheusText((await get('Bearer platform').expect(200)).text);
    expect(sampleValue(platform, 'zmodu_tokens_total', { tenant: 'globex-secret-customer', agent: 'trader' })).toBe(7);
    expect(sampleValue(platform, 'zmodu_tokens_total', { tenant: 'other', agent: 'trader' })).toBe(11);
    expect(platform.some((s) => s.name === 'zmodu_run_duration_seconds_count')).toBe(true);

    // The overflow label is no tenant's; a view of a tenant id that is no id, and a refusal, see nothing.
    expect(parsePrometheusText((await get('Bearer other-admin').expect(200)).text)).toEqual([]);
    await get('Bearer look-alike').expect(403);
    await get('Bearer nobody').expect(403);
    expect((await get('Bearer expired').expect(401)).body.message).toBe('the token has expired');
  });

  it('checks a scrape with `authorize` (403 when it says no or throws) and applies the decorators given to its controller', async () => {
    const app = await boot({
      authorize: (req) => {
        const auth = (req as { headers: Record<string, string | undefined> }).headers.authorization;
        if (auth === 'Bearer boom') throw new Error('broken check');
        return auth === 'Bearer scrape-secret';
      },
      decorators: [SetMetadata('test:public', true)],
    });
    await request(app.getHttpServer()).get('/metrics').expect(403);
    await request(app.getHttpServer()).get('/metrics').set('authorization', 'Bearer wrong').expect(403);
    await request(app.getHttpServer()).get('/metrics').set('authorization', 'Bearer boom').expect(403);
    await request(app.getHttpServer()).get('/metrics').set('authorization', 'Bearer scrape-secret').expect(200);
    // The controller class is made per forRoot: the decorators mark this app's controller, not another's.
    const other = await boot();
    const controllerOf = (a: INestApplication) =>
      [
        ...(a as unknown as { container: { getModules(): Map<string, { controllers: Map<unknown, { metatype: object }> }> } }).container
          .getModules()
          .values(),
      ]
        .flatMap((m) => [...m.controllers.values()])
        .map((c) => c.metatype)
        .find((t) => (t as { name?: string }).name === 'MetricsController');
    expect(Reflect.getMetadata('test:public', controllerOf(app)!)).toBe(true);
    expect(Reflect.getMetadata('test:public', controllerOf(other)!)).toBeUndefined();
  });

  it('an outbox store that cannot be read leaves the gauges unknown and counts an error; the scrape still answers', async () => {
    const app = await boot({}, [UnreachableOutboxStore]);
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    const samples = parsePrometheusText(res.text);
    expect(sampleValue(samples, 'zmodu_outbox_dead_letters')).toBeNaN();
    expect(sampleValue(samples, 'zmodu_outbox_backlog', { status: 'pending' })).toBeUndefined();
    expect(sampleValue(samples, 'zmodu_metrics_errors_total', { source: 'outbox' })).toBe(1);
  });

  it('forRootAsync: the options from a factory, the route beside it', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        MetricsModule.forRootAsync({ path: '/scrape', useFactory: async () => ({ prefix: 'async_', maxTenantLabels: 1 }) }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    const quota = app.get(TokenQuota);
    await quota.chargeQuietly({ tenantId: 't1', agent: 'a' }, 1);
    await quota.chargeQuietly({ tenantId: 't2', agent: 'a' }, 2);
    const samples = parsePrometheusText((await request(app.getHttpServer()).get('/scrape').expect(200)).text);
    expect(sampleValue(samples, 'async_tokens_total', { tenant: 't1', agent: 'a' })).toBe(1);
    expect(sampleValue(samples, 'async_tokens_total', { tenant: 'other', agent: 'a' })).toBe(2);
  });

  it('refuses wrong options at boot, naming the option', async () => {
    const cases: [Partial<MetricsModuleOptions & MetricsModuleExtras>, string][] = [
      [{ prefix: '1bad' }, 'prefix'],
      [{ prefix: 'has space_' }, 'prefix'],
      [{ maxTenantLabels: 0 }, 'maxTenantLabels'],
      [{ maxTenantLabels: 1.5 }, 'maxTenantLabels'],
      [{ runDurationBuckets: [5, 1] }, 'runDurationBuckets'],
      [{ runDurationBuckets: [] }, 'runDurationBuckets'],
      [{ defaultMetrics: 'yes' as unknown as boolean }, 'defaultMetrics'],
      [{ authorize: 'open' as unknown as null }, 'authorize'],
    ];
    for (const [options, field] of cases) {
      const error = await boot(options).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(InvalidMetricsOptionsException);
      expect((error as InvalidMetricsOptionsException).field).toBe(field);
      expect((error as Error).message).toContain(`'${field}'`);
    }
    expect(() => MetricsModule.forRoot({ path: 'metrics' })).toThrow(InvalidMetricsOptionsException);
  });
});
