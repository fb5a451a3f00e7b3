import { INestApplication } from '@nestjs/common';
import { AgentWorker } from '@zmodu/agent';
import { AgentAuditLog } from '@zmodu/guard';
import { CONSOLE_CSP } from '@zmodu/admin/internal';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** The approvals console's server side in the sample: its files, settings and session, and the approval endpoints it reads. */
describe('the approvals console API (sample)', () => {
  const apps = sampleAppsOnTestDatabase(SECRET);
  const bearer = (tenant: string, user: string, permissions: string[]) => `Bearer ${mintToken(SECRET, { tenant, user, permissions })}`;
  const lead = (tenant = 'acme', user = 'lee') => bearer(tenant, user, ['approval:decide', 'desk:lead']);

  /** The desk agent's scripted run (three proposals: executed, rejected, pending); the pending one's id and the run id. */
  const deskRun = async (app: INestApplication, user = 'alice') => {
    const res = await request(app.getHttpServer())
      .post('/agents/desk/runs')
      .set('Authorization', bearer('acme', user, ['agent:run', 'order:submit']))
      .send({ goal: 'place the orders' })
      .expect(200);
    const outcomes = res.body.steps[0].toolCalls.map((c: { observation: string }) => JSON.parse(c.observation));
    await app.get(AgentAuditLog).flush();
    return { pendingId: outcomes[2].proposalId as string, runId: res.body.runId as string };
  };

  it('serves the built console at /admin/console/ without a token, under a strict CSP, and redirects /admin/console to it', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    const redirect = await http.get('/admin/console?x=1').expect(308);
    expect(redirect.headers.location).toBe('/admin/console/?x=1');
    const page = await http
      .get('/admin/console/')
      .expect(200)
      .expect('content-type', /text\/html/);
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
    const scripts = [...page.text.matchAll(/src="\.\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    expect(page.text).not.toMatch(/https?:\/\//); // nothing from another origin: it works offline
    const js = await http
      .get(`/admin/console/assets/${scripts[0]}`)
      .expect(200)
      .expect('content-type', /javascript/);
    expect(js.headers['cache-control']).toMatch(/immutable/);
    for (const bad of ['nope.js', '..%2F..%2Fpackage.json', '%2E%2E', 'constructor', '__proto__'])
      await http.get(`/admin/console/assets/${bad}`).expect(404);
  });

  it('answers its settings without a token, and the signed-in user only with one', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    const config = await http.get('/admin/console/config.json').expect(200);
    expect(config.body).toEqual({
      title: 'Desk approvals',
      loginUrl: null,
      pollIntervalMs: 5000,
      apiBase: '/admin',
      tokenHandoffKey: 'zmodu.console.token',
      features: { audit: true, agents: true },
    });
    await http.get('/admin/console/session').expect(401);
    await http.get('/admin/console/session').set('Authorization', 'Bearer garbage').expect(401);
    const session = await http.get('/admin/console/session').set('Authorization', lead('globex', 'gil')).expect(200);
    expect(session.body).toEqual({
      tenantId: 'globex',
      userId: 'gil',
      permissions: ['approval:decide', 'desk:lead'],
      decidePermission: 'approval:decide',
      auditPermission: 'admin:audit',
      agentsPermission: 'admin:agents',
    });
  });

  it("answers the action's JSON Schema for the edit form, for the proposal's tenant only", async () => {
    const app = await apps.boot();
    const { pendingId } = await deskRun(app);
    const http = request(app.getHttpServer());
    const res = await http.get(`/admin/approvals/${pendingId}/schema`).set('Authorization', lead()).expect(200);
    expect(res.body.action).toBe('order.submit');
    expect(res.body.schema).toMatchObject({ type: 'object', properties: { symbol: expect.any(Object), qty: expect.any(Object) } });
    await http.get(`/admin/approvals/${pendingId}/schema`).set('Authorization', lead('globex')).expect(404);
    await http
      .get(`/admin/approvals/${pendingId}/schema`)
      .set('Authorization', bearer('acme', 'x', ['desk:lead']))
      .expect(403);
  });

  it('previews an edit: the amount the desk computes, the extra step past 100,000, a refusal, a stale version; nothing written', async () => {
    const app = await apps.boot();
    const { pendingId } = await deskRun(app);
    const http = request(app.getHttpServer());
    const before = (await http.get(`/admin/approvals/${pendingId}`).set('Authorization', lead()).expect(200)).body;
    expect(before).toMatchObject({ amount: 24_050, version: 1, steps: [{ name: 'desk lead' }] });
    const preview = (payload: unknown, version = before.version) =>
      http.post(`/admin/approvals/${pendingId}/preview`).set('Authorization', lead()).send({ version, payload });

    const bigger = await preview({ ...before.payload, qty: 2500 }).expect(200);
    expect(bigger.body).toEqual({
      ok: true,
      amount: 120_250,
      previousAmount: 24_050,
      steps: [
        { name: 'desk lead', permission: 'desk:lead' },
        { name: 'second approver', permission: 'approval:decide' },
      ],
      extraSteps: [{ name: 'second approver', permission: 'approval:decide' }],
      restarts: true,
      risk: { verdict: 'escalate', reason: expect.any(String) },
    });
    // A limit price the model might lower does not lower the amount: the desk's market price counts for a buy.
    expect((await preview({ ...before.payload, limitPrice: 0.01 }).expect(200)).body).toMatchObject({ ok: true, amount: 24_050 });
    expect((await preview({ ...before.payload, qty: 'many' }).expect(200)).body).toMatchObject({ ok: false, field: 'payload/qty' });
    expect((await preview({ ...before.payload, qty: 10_000 }).expect(200)).body).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/tenant limit/),
    });
    const stale = await preview({ ...before.payload, qty: 600 }, 7).expect(409);
    expect(stale.body.current).toEqual({ status: 'pending', version: 1, step: 0 });
    await http.post(`/admin/approvals/${pendingId}/preview`).set('Authorization', lead()).send({ payload: {} }).expect(400);
    await http.post(`/admin/approvals/${pendingId}/preview`).set('Authorization', lead()).send({ version: 1 }).expect(400);
    await http
      .post(`/admin/approvals/${pendingId}/preview`)
      .set('Authorization', lead('globex'))
      .send({ version: 1, payload: before.payload })
      .expect(404);
    const after = (await http.get(`/admin/approvals/${pendingId}`).set('Authorization', lead()).expect(200)).body;
    expect(after).toEqual(before);
  });

  it("answers the run that made a proposal: the worker's record with its tool calls and guard decisions, and the audited calls", async () => {
    const app = await apps.boot();
    const worker = app.get(AgentWorker);
    const done = new Promise<void>((resolve) => worker.onResult(() => resolve()));
    const { runId } = await worker.post('place the orders', {
      agent: 'desk',
      tenantId: 'acme',
      userId: 'alice',
      permissions: ['agent:run', 'order:submit'],
    });
    await done;
    await app.get(AgentAuditLog).flush();
    const http = request(app.getHttpServer());
    const list = (await http.get('/admin/approvals?status=pending').set('Authorization', lead()).expect(200)).body;
    const proposal = list.items.find((p: { runId: string }) => p.runId === runId);
    expect(proposal).toBeDefined();
    const res = await http.get(`/admin/approvals/${proposal.id}/run`).set('Authorization', lead()).expect(200);
    expect(res.body.runId).toBe(runId);
    expect(res.body.run).toMatchObject({ id: runId, agent: 'desk', goal: 'place the orders', status: 'waiting' });
    expect(res.body.run).not.toHaveProperty('permissions');
    expect(res.body.run).not.toHaveProperty('leaseOwner');
    const calls = res.body.run.steps.flatMap((s: { toolCalls: unknown[] }) => s.toolCalls);
    expect(calls.map((c: { name: string; decision: string }) => [c.name, c.decision])).toEqual([
      ['approval.submit', 'allowed'],
      ['approval.submit', 'allowed'],
      ['approval.submit', 'allowed'],
    ]);
    expect(res.body.calls.map((c: { skill: string; runId: string; tenantId: string }) => [c.skill, c.runId, c.tenantId])).toEqual(
      expect.arrayContaining([['approval.submit', runId, 'acme']]),
    );
    expect(res.body.calls.every((c: { runId: string }) => c.runId === runId)).toBe(true);
    await http.get(`/admin/approvals/${proposal.id}/run`).set('Authorization', lead('globex')).expect(404);
  });

  it('a proposal made outside the worker has no stored run, but its audited calls', async () => {
    const app = await apps.boot();
    const { pendingId, runId } = await deskRun(app);
    const res = await request(app.getHttpServer()).get(`/admin/approvals/${pendingId}/run`).set('Authorization', lead()).expect(200);
    expect(res.body.runId).toBe(runId);
    expect(res.body.run).toBeNull();
    expect(res.body.calls.filter((c: { skill: string }) => c.skill === 'approval.submit')).toHaveLength(3);
  });
});
