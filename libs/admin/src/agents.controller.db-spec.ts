import { INestApplication } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, AgentRunRecord, AgentSpec, AgentWorker, AgentWorkerModule, ScriptedModelProvider } from '@zmodu/agent';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { SkillsModule } from '@zmodu/skills';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { as, DeskSkills, startAdminApp } from './__fixtures__/admin-fixtures';

const trader = (provider: ScriptedModelProvider): AgentSpec => ({
  name: 'trader',
  provider,
  skills: ['market.quote', 'order.submit'],
  // order.submit is execute-class and allowExecute is false: a blind spot; ghost.skill is unknown.
  guard: { allow: ['market.quote', 'order.submit', 'ghost.skill'], deny: ['ledger.close'], allowExecute: false },
  budget: { tokensPerPeriod: 50_000 },
});
const analyst: AgentSpec = {
  name: 'analyst',
  provider: new ScriptedModelProvider([{ text: 'done' }]),
  skills: (s) => s.action === 'read',
  guard: { allow: ['market.quote', 'market.depth'] },
};

describe('GET /admin/agents', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const finished: AgentRunRecord[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const model = new ScriptedModelProvider([
      {
        text: 'Looking.',
        toolCalls: [
          { name: 'market.quote', arguments: { symbol: 'ACME' } },
          { name: 'order.submit', arguments: {} },
        ],
        usage: { inputTokens: 30, outputTokens: 10 },
      },
      { text: 'ACME is at 101.5; I may not submit orders.', usage: { inputTokens: 50, outputTokens: 12 } },
    ]);
    app = await startAdminApp(
      [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true })),
        AgentModule.forRoot({ agents: [trader(model), analyst] }),
        AgentWorkerModule.forRoot({ runStore: 'memory', onResult: (r) => void finished.push(r) }),
      ],
      { agents: true },
      [DeskSkills],
    );
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers 401 without a caller and 403 without admin:agents', async () => {
    await request(app.getHttpServer()).get('/admin/agents').expect(401);
    const denied = await request(app.getHttpServer()).get('/admin/agents').set(as('acme', 'admin:quota')).expect(403);
    expect(denied.body.message).toBe('Missing permission: admin:agents.');
  });

  it("reports each agent's policy, its auditPolicy report and counters at zero before any run", async () => {
    const res = await request(app.getHttpServer()).get('/admin/agents').set(as('acme', 'admin:agents')).expect(200);
    expect(res.body.agents.map((a: { name: string }) => a.name)).toEqual(['analyst', 'trader']);
    const [analystReport, traderReport] = res.body.agents;
    expect(traderReport).toMatchObject({
      skills: ['market.quote', 'order.submit'],
      policy: { allow: ['market.quote', 'order.submit', 'ghost.skill'], deny: ['ledger.close'], allowExecute: false, budget: null },
      budget: { tokensPerPeriod: 50_000 },
      health: {
        inert: false,
        unknownTools: ['ghost.skill'],
        classDeniedTools: ['order.submit'],
        hasClassBlindSpot: true,
        effectiveTools: ['market.quote'],
      },
      needsAttention: true,
      counters: { guard: { allowed: 0, denied: 0, denied_execute_class: 0 }, runs: { runs: 0, toolCalls: 0, toolDeniedTotal: 0 } },
    });
    expect(analystReport).toMatchObject({
      skills: ['market.quote', 'market.depth'], // in the order the model is offered them
      policy: { allow: ['market.quote', 'market.depth'], deny: [], allowExecute: false },
      budget: null,
      health: { unknownTools: [], classDeniedTools: [], effectiveTools: ['market.depth', 'market.quote'] },
      needsAttention: false,
    });
    expect(res.body.worker).toEqual({
      queued: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      interrupted: 0,
      rejected: 0,
      handlerErrors: 0,
      waiting: 0,
      resumed: 0,
      unhandledRejections: { contained: 0, raised: 0 },
    });
  });

  it('moves the counters after a run: the guard denial by cause, the run, its tokens and the worker', async () => {
    await app
      .get(AgentWorker)
      .post('quote ACME and buy 10', { agent: 'trader', tenantId: 'acme', userId: 'alice', permissions: ['order:submit'] });
    for (let i = 0; i < 200 && finished.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(finished).toMatchObject([{ status: 'succeeded', agent: 'trader' }]);
    const res = await request(app.getHttpServer()).get('/admin/agents').set(as('globex', 'admin:agents')).expect(200);
    const traderReport = res.body.agents.find((a: { name: string }) => a.name === 'trader');
    expect(traderReport.counters.guard).toEqual({
      allowed: 1,
      denied: 1,
      denied_explicitly: 0,
      denied_not_listed: 0,
      denied_execute_class: 1,
      denied_budget: 0,
      denied_staged: 0,
      denied_turn_cap: 0,
    });
    expect(traderReport.counters.runs).toMatchObject({
      runs: 1,
      steps: 2,
      toolCalls: 2,
      toolDenied: { denied_execute_class: 1 },
      toolDeniedTotal: 1,
      tokensIn: 80,
      tokensOut: 22,
    });
    expect(res.body.worker).toMatchObject({ succeeded: 1, failed: 0, queued: 0, running: 0 });
    const analystReport = res.body.agents.find((a: { name: string }) => a.name === 'analyst');
    expect(analystReport.counters.runs.runs).toBe(0);
  });
});

describe('GET /admin/agents, other applications', () => {
  it('answers worker: null when AgentModule runs no worker', async () => {
    const app = await startAdminApp(
      [AgentModule.forRoot({ agents: [analyst], guard: { auditStore: 'memory', quotaStore: 'memory' } })],
      { agents: true },
      [DeskSkills],
    );
    try {
      const res = await request(app.getHttpServer()).get('/admin/agents').set(as('acme', 'admin:agents')).expect(200);
      expect(res.body).toMatchObject({ agents: [{ name: 'analyst' }], worker: null });
    } finally {
      await app.close();
    }
  });

  it('refuses to boot with agents: true and no AgentModule, saying what to import', async () => {
    const booting = startAdminApp([GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot()], {
      agents: true,
    });
    await expect(booting).rejects.toThrow(/GET \/admin\/agents.*import AgentModule\.forRoot\(\{ agents \}\) or leave agents: true out/);
  });
});
