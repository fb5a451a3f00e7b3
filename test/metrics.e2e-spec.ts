import { INestApplication } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { AgentRunResult } from '@zmodu/agent';
import { AgentAuditLog, TokenQuota, TokenQuotaStore } from '@zmodu/guard';
import { TOKEN_QUOTA_STORE } from '@zmodu/guard/internal';
import { OutboxService } from '@zmodu/outbox';
import { SkillRegistry } from '@zmodu/skills';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { parsePrometheusText, PromSample, sampleValue } from '../libs/admin/src/__fixtures__/prometheus-text';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { ConfigError, metricsFromEnv } from '../apps/sample/src/config';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const SCRAPE_TOKEN = 'scrape-token-0123456789abcdef';
const token = (permissions?: string[]) => mintToken(SECRET, { tenant: 'acme', user: 'alice', permissions });

describe('the sample: GET /metrics and GET /health/ready', () => {
  const apps = sampleAppsOnTestDatabase(SECRET);

  const scrape = async (app: INestApplication, auth = `Bearer ${SCRAPE_TOKEN}`): Promise<PromSample[]> =>
    parsePrometheusText((await request(app.getHttpServer()).get('/metrics').set('Authorization', auth).expect(200)).text);
  const sum = (samples: PromSample[], name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

  it('counts a scripted run of the trader: its tool calls, denials, tokens, duration and proposal verdict', async () => {
    const app = await apps.boot({ metrics: { token: SCRAPE_TOKEN } });
    await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'nobody.listens', payload: {} });
    const before = await scrape(app);
    // Two runs: one with every permission, one whose token lacks market:read (its quote is refused: missing_permission).
    const runAs = async (permissions?: string[]) =>
      (
        await request(app.getHttpServer())
          .post('/agents/trader/runs')
          .set('Authorization', `Bearer ${token(permissions)}`)
          .send({ goal: 'buy 10 ACME' })
          .expect(200)
      ).body as AgentRunResult;
    const runs = [await runAs(), await runAs(['agent:run', 'order:draft'])];
    const after = await scrape(app);
    const delta = (name: string, labels: Record<string, string>) => sum(after, name, labels) - sum(before, name, labels);

    const calls = runs.flatMap((r) => r.steps.flatMap((s) => s.toolCalls));
    const registry = app.get(SkillRegistry);
    for (const call of calls) {
      const same = calls.filter((c) => c.name === call.name && c.outcome === call.outcome).length;
      const action = registry.get(call.name)?.action ?? 'execute';
      expect(delta('zmodu_tool_calls_total', { skill: call.name, action, outcome: call.outcome })).toBe(same);
    }
    expect(delta('zmodu_tool_calls_total', {})).toBe(calls.length);
    const causes = calls.filter((c) => c.cause !== null);
    expect(causes.map((c) => c.cause)).toContain('missing_permission');
    expect(delta('zmodu_tool_denials_total', {})).toBe(causes.length);
    for (const c of causes)
      expect(delta('zmodu_tool_denials_total', { cause: c.cause! })).toBe(causes.filter((x) => x.cause === c.cause).length);

    // Tokens: the model turns plus what the dispatcher charged per call, as audited; the quota store agrees.
    let expected = 0;
    for (const run of runs) {
      const audited = await app.get(AgentAuditLog).query({ runId: run.runId });
      expected += run.metrics.tokensIn + run.metrics.tokensOut + audited.reduce((n, e) => n + e.tokens, 0);
    }
    expect(delta('zmodu_tokens_total', { tenant: 'acme', agent: 'trader' })).toBe(expected);
    const store = app.get<TokenQuotaStore>(TOKEN_QUOTA_STORE);
    expect(sampleValue(after, 'zmodu_tokens_total', { tenant: 'acme', agent: 'trader' })).toBe(
      await store.used({ tenantId: 'acme', agent: 'trader' }, app.get(TokenQuota).currentPeriod()),
    );

    for (const status of new Set(runs.map((r) => r.stoppedReason)))
      expect(delta('zmodu_run_duration_seconds_count', { agent: 'trader', status })).toBe(
        runs.filter((r) => r.stoppedReason === status).length,
      );
    expect(delta('zmodu_run_duration_seconds_count', { agent: 'trader' })).toBe(2);
    // The trader may not execute: the proposal of the first run waits for a human.
    expect(runs[0].pendingApprovals.map((p) => p.verdict)).toEqual(['execute_not_permitted']);
    const verdicts = runs.flatMap((r) => r.pendingApprovals).filter((p) => p.verdict === 'execute_not_permitted').length;
    expect(delta('zmodu_proposal_verdicts_total', { verdict: 'execute_not_permitted' })).toBe(verdicts);
    expect(sampleValue(after, 'zmodu_outbox_backlog', { status: 'pending' })).toBe(1);
  });

  it("shows a JWT with admin:metrics only its tenant's series; every series only to the scrape token (attack: acme's metrics admin reads globex's name and usage)", async () => {
    const app = await apps.boot({ seed: false, metrics: { token: SCRAPE_TOKEN } });
    const http = () => request(app.getHttpServer());
    for (const tenant of ['acme', 'globex'])
      await http()
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${mintToken(SECRET, { tenant, user: 'alice' })}`)
        .send({ goal: 'buy 10 ACME' })
        .expect(200);
    const acmeAdmin = `Bearer ${token(['admin:metrics'])}`;
    const tenantView = await http().get('/metrics').set('Authorization', acmeAdmin).expect(200);
    expect(tenantView.text).not.toContain('globex');
    const own = parsePrometheusText(tenantView.text);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((s) => s.name === 'zmodu_tokens_total' && s.labels.tenant === 'acme')).toBe(true);
    // The series summed over every tenant are the platform's, not a tenant's.
    expect(tenantView.text).not.toMatch(/zmodu_(tool_calls_total|run_duration_seconds|outbox_backlog)/);

    const platform = await scrape(app, `Bearer ${SCRAPE_TOKEN}`);
    expect(sampleValue(platform, 'zmodu_tokens_total', { tenant: 'globex', agent: 'trader' })).toBeGreaterThan(0);
    expect(sampleValue(platform, 'zmodu_tokens_total', { tenant: 'acme', agent: 'trader' })).toBe(
      sampleValue(own, 'zmodu_tokens_total', { tenant: 'acme', agent: 'trader' }),
    );
    expect(platform.some((s) => s.name === 'zmodu_outbox_dead_letters')).toBe(true);

    // No credential, a wrong scrape token or a bad JWT: 401; a JWT without admin:metrics: 403.
    await http().get('/metrics').expect(401);
    await http().get('/metrics').set('Authorization', `Bearer ${SCRAPE_TOKEN}x`).expect(401);
    await http()
      .get('/metrics')
      .set('Authorization', `Bearer ${token(['agent:run'])}`)
      .expect(403);
    // Without a scrape token, a JWT with admin:metrics still sees only its tenant's series.
    const unscraped = await apps.boot({ seed: false });
    const view = await request(unscraped.getHttpServer()).get('/metrics').set('Authorization', acmeAdmin).expect(200);
    expect(parsePrometheusText(view.text).every((s) => s.labels.tenant === 'acme')).toBe(true);
    expect(view.text).not.toContain('zmodu_tool_calls_total');
    await request(unscraped.getHttpServer()).get('/metrics').set('Authorization', `Bearer ${SCRAPE_TOKEN}`).expect(401);
  });

  it('reads the scrape token from ZMODU_METRICS_TOKEN, refusing a short one or one with spaces', () => {
    expect(metricsFromEnv({})).toEqual({});
    expect(metricsFromEnv({ ZMODU_METRICS_TOKEN: SCRAPE_TOKEN })).toEqual({ metrics: { token: SCRAPE_TOKEN } });
    expect(() => metricsFromEnv({ ZMODU_METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => metricsFromEnv({ ZMODU_METRICS_TOKEN: `${SCRAPE_TOKEN} with spaces` })).toThrow(/ZMODU_METRICS_TOKEN must be 24 to 512/);
  });

  it('readiness: 200 with the outbox figures; past an outbox limit degraded by default, 503 with Retry-After when set to down', async () => {
    const app = await apps.boot({ seed: false });
    const ready = await request(app.getHttpServer()).get('/health/ready').expect(200);
    expect(ready.headers['retry-after']).toBeUndefined();
    expect(ready.body.details).toMatchObject({ database: { status: 'up' }, outbox: { status: 'up', pending: expect.any(Number) } });
    expect(ready.body.details.queue).toBeUndefined(); // in-process queue: nothing to reach

    const pending = ready.body.details.outbox.pending as number;
    await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'nobody.listens', payload: {} });
    const strict = await apps.boot({ seed: false, health: { outbox: { maxBacklog: pending } } });
    const degraded = await request(strict.getHttpServer()).get('/health/ready').expect(200);
    expect(degraded.body.details.outbox).toMatchObject({ status: 'up', degraded: true, message: expect.stringMatching(/undelivered/) });

    const down = await apps.boot({ seed: false, health: { outbox: { maxBacklog: pending, whenExceeded: 'down' } } });
    const res = await request(down.getHttpServer()).get('/health/ready').expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.error.outbox).toMatchObject({ status: 'down', pending: pending + 1 });
  });

  it('readiness: 503 with Retry-After once the database is gone (database and outbox down); liveness stays 200', async () => {
    const app = await apps.boot({ seed: false });
    await app.get<DataSource>(getDataSourceToken()).destroy();
    const res = await request(app.getHttpServer()).get('/health/ready').expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.error).toMatchObject({ database: { status: 'down' }, outbox: { status: 'down' } });
    await request(app.getHttpServer()).get('/health').expect(200);
  });
});
