import { INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentModule, AgentRegistry, ScriptedModelProvider } from '@zmodu/agent';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AgentAuditLog, TokenQuota, TokenQuotaStore, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { TOKEN_QUOTA_STORE } from '@zmodu/guard/internal';
import { OutboxModule, OutboxService, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { OutboxRelay } from '@zmodu/outbox/internal';
import { PipelineModule, PipelineModuleOptions, ProposalPipeline, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { Skill, SkillInvocation } from '@zmodu/skills';
import request from 'supertest';
import { parsePrometheusText, PromSample, sampleValue } from '../__fixtures__/prometheus-text';
import { MetricsModule } from './metrics.module';
import { ZmoduMetrics } from './zmodu-metrics';

@Injectable()
class DeskSkills {
  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'], additionalProperties: false },
  })
  quote(args: { symbol: string }) {
    return { symbol: args.symbol, price: 101.5 };
  }

  @Skill({ name: 'order.cancel', description: 'Cancel an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } })
  cancel() {
    return { cancelled: true };
  }

  @Skill({
    name: 'order.submit',
    action: 'execute',
    staged: true,
    description: 'Submit an order (staged)',
    parameters: {
      type: 'object',
      properties: { symbol: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
      required: ['symbol', 'qty'],
      additionalProperties: false,
    },
  })
  submit(args: { qty: number }, ctx: SkillInvocation) {
    return { submitted: true, qty: args.qty, proposal: ctx.staged?.proposalId };
  }
}

const PIPELINE: Partial<PipelineModuleOptions> = {
  actions: { 'order.submit': { amount: (payload) => Number(payload.qty) * 100 } },
  proposable: ['order.submit'],
  risk: { thresholds: { 'order.submit': { escalateAt: 10_000 } } },
  approval: { chains: { 'order.submit': [{ minAmount: 10_000, steps: [{ name: 'desk lead', permission: 'desk:lead' }] }] } },
  recoveryIntervalMs: 0,
};

/** One model turn with four calls (ok, denied by class, unknown skill, bad arguments), then the answer; usage given exactly. */
const script = () =>
  new ScriptedModelProvider([
    {
      text: 'Checking.',
      toolCalls: [
        { name: 'market.quote', arguments: { symbol: 'ACME' } },
        { name: 'order.cancel', arguments: { id: 'o-1' } },
        { name: 'ghost.skill', arguments: {} },
        { name: 'market.quote', arguments: { symbol: 5 } },
      ],
      usage: { inputTokens: 100, outputTokens: 10 },
    },
    { text: 'ACME is 101.5.', usage: { inputTokens: 200, outputTokens: 20 } },
  ]);

describe('MetricsModule: the metrics of a scripted run, proposals and the outbox, at GET /metrics', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let samples: PromSample[];
  let runTokens: number;
  let runSeconds: number;
  /** The age of the oldest undelivered event as the database tells it, read right after the scrape. */
  let oldestAgeAfter: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(
          await db.options({
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, ...ZMODU_OUTBOX_MIGRATIONS],
            migrationsRun: true,
          }),
        ),
        AgentModule.forRoot({
          agents: [
            {
              name: 'trader',
              provider: script(),
              skills: ['market.quote', 'order.cancel'],
              guard: { allow: ['market.quote', 'order.cancel'], allowExecute: false },
            },
          ],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
        PipelineModule.forRoot(PIPELINE as PipelineModuleOptions),
        OutboxModule.forRoot({
          relay: { autoStart: false },
          handlers: {
            'always.fails': () => {
              throw new Error('the receiver refused it');
            },
          },
        }),
        MetricsModule.forRoot(),
      ],
      providers: [DeskSkills],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();

    const result = await app.get(AgentRegistry).get('trader').run('Quote ACME', { tenantId: 't1', userId: 'alice' });
    expect(result.stoppedReason).toBe('final');
    runSeconds = result.metrics.durationMs / 1000;
    // What the dispatcher charged for the calls of this run (its estimate of arguments and observations), exactly as audited.
    const entries = await app.get(AgentAuditLog).query({ runId: result.runId });
    expect(entries).toHaveLength(4);
    runTokens = 330 + entries.reduce((n, e) => n + e.tokens, 0);

    const pipeline = app.get(ProposalPipeline);
    const proposer = { tenantId: 't1', userId: 'alice', permissions: ['order:submit'] };
    expect((await pipeline.submit(proposer, { action: 'order.submit', payload: { symbol: 'ACME', qty: 1 } })).verdict).toBe('executed');
    const big = await pipeline.submit(proposer, { action: 'order.submit', payload: { symbol: 'ACME', qty: 500 } });
    expect(big.verdict).toBe('needs_human');
    const lead = { tenantId: 't1', userId: 'bob', permissions: ['desk:lead'] };
    const rejected = await pipeline.decide(lead, big.proposalId!, { decision: 'reject', reason: 'too big', version: 1, step: 0 });
    expect(rejected.verdict).toBe('rejected_by_human');

    const outbox = app.get(OutboxService);
    await outbox.publish({ tenantId: 't1', topic: 'always.fails', payload: {}, maxAttempts: 1 });
    await app.get(OutboxRelay).runOnce();
    await outbox.publish({ tenantId: 't1', topic: 'nobody.listens', payload: {} });
    await outbox.publish({ tenantId: 't2', topic: 'nobody.listens', payload: {} });

    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    // The Prometheus text format 0.0.4 (Express puts the charset first).
    expect(res.headers['content-type'].split(/;\s*/).sort()).toEqual(['charset=utf-8', 'text/plain', 'version=0.0.4']);
    samples = parsePrometheusText(res.text);
    const [{ age }] = await app
      .get(DataSource)
      .query(
        `SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM zmodu_outbox WHERE status IN ('pending', 'delivering')`,
      );
    oldestAgeAfter = Number(age);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('counts tool calls by skill, action class and outcome; a name no skill has is "unknown"', () => {
    const calls = (labels: Record<string, string>) => sampleValue(samples, 'zmodu_tool_calls_total', labels);
    expect(calls({ skill: 'market.quote', action: 'read', outcome: 'ok' })).toBe(1);
    expect(calls({ skill: 'market.quote', action: 'read', outcome: 'invalid_arguments' })).toBe(1);
    expect(calls({ skill: 'order.cancel', action: 'execute', outcome: 'denied' })).toBe(1);
    expect(calls({ skill: 'unknown', action: 'execute', outcome: 'denied' })).toBe(1);
    // The staged execution of the proposal that went through is a dispatch like any other.
    expect(calls({ skill: 'order.submit', action: 'execute', outcome: 'ok' })).toBe(1);
    expect(samples.filter((s) => s.name === 'zmodu_tool_calls_total').reduce((n, s) => n + s.value, 0)).toBe(5);
    expect(samples.some((s) => s.labels.skill === 'ghost.skill')).toBe(false);
  });

  it('counts denials by cause', () => {
    const denials = samples.filter((s) => s.name === 'zmodu_tool_denials_total');
    expect(Object.fromEntries(denials.map((s) => [s.labels.cause, s.value]))).toEqual({
      denied_execute_class: 1,
      denied_not_listed: 1,
      invalid_arguments: 1,
    });
  });

  it('counts the tokens charged by tenant and agent: the model turns and the tool calls, as the quota store has them', async () => {
    expect(sampleValue(samples, 'zmodu_tokens_total', { tenant: 't1', agent: 'trader' })).toBe(runTokens);
    const store = app.get<TokenQuotaStore>(TOKEN_QUOTA_STORE);
    const period = app.get(TokenQuota).currentPeriod();
    expect(await store.used({ tenantId: 't1', agent: 'trader' }, period)).toBe(runTokens);
    // The staged execution is metered under the pipeline's agent name.
    const staged = sampleValue(samples, 'zmodu_tokens_total', { tenant: 't1', agent: 'pipeline' });
    expect(staged).toBe(await store.used({ tenantId: 't1', agent: 'pipeline' }, period));
    expect(staged).toBeGreaterThan(0);
  });

  it('observes one run in the duration histogram, by agent and status', () => {
    expect(sampleValue(samples, 'zmodu_run_duration_seconds_count', { agent: 'trader', status: 'final' })).toBe(1);
    // In seconds: the run's own duration (its metrics, in ms) is what was observed.
    expect(sampleValue(samples, 'zmodu_run_duration_seconds_sum', { agent: 'trader', status: 'final' })).toBe(runSeconds);
    expect(runSeconds).toBeGreaterThan(0);
    expect(sampleValue(samples, 'zmodu_run_duration_seconds_bucket', { agent: 'trader', status: 'final', le: '+Inf' })).toBe(1);
  });

  it('counts proposal verdicts: a submission executed, one sent to a human, the human rejection', () => {
    const verdicts = samples.filter((s) => s.name === 'zmodu_proposal_verdicts_total');
    expect(Object.fromEntries(verdicts.map((s) => [s.labels.verdict, s.value]))).toEqual({
      executed: 1,
      needs_human: 1,
      rejected_by_human: 1,
    });
  });

  it('reads the outbox backlog and dead letters at scrape time, across tenants', async () => {
    expect(sampleValue(samples, 'zmodu_outbox_backlog', { status: 'pending' })).toBe(2);
    expect(sampleValue(samples, 'zmodu_outbox_backlog', { status: 'delivering' })).toBe(0);
    expect(sampleValue(samples, 'zmodu_outbox_dead_letters')).toBe(1);
    // In seconds, of the oldest undelivered event: no more than the database counts for it right after the scrape.
    const age = sampleValue(samples, 'zmodu_outbox_oldest_pending_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual(oldestAgeAfter);
    // Read again at the next scrape: a retried dead letter is pending now.
    await app.get(OutboxService).publish({ tenantId: 't3', topic: 'nobody.listens', payload: {} });
    const again = parsePrometheusText(await app.get(ZmoduMetrics).scrape());
    expect(sampleValue(again, 'zmodu_outbox_backlog', { status: 'pending' })).toBe(3);
  });

  it('writes a tenant name with a quote, a backslash and a newline as an escaped label value that parses back', async () => {
    const tenant = 'evil"} 1\nzmodu_fake 2\\';
    await app.get(TokenQuota).chargeQuietly({ tenantId: tenant, agent: 'trader' }, 7);
    const text = await app.get(ZmoduMetrics).scrape();
    const parsed = parsePrometheusText(text);
    expect(sampleValue(parsed, 'zmodu_tokens_total', { tenant, agent: 'trader' })).toBe(7);
    expect(parsed.some((s) => s.name === 'zmodu_fake')).toBe(false);
  });
});
