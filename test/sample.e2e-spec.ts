import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { AgentAuditLog, Guard } from '@zmodu/guard';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../apps/sample/src/app.module';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { fenceTablesFor, tenantFenceStatus } from '@zmodu/data';
import { SAMPLE_DATA_ENTITIES } from '../apps/sample/src/trading/data-entities';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { parseEventStream, sseBody, streamedRun } from './support/event-stream';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

describe('sample app over HTTP', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const token = (over: { tenant?: string; user?: string; permissions?: string[] } = {}) =>
    mintToken(SECRET, { tenant: over.tenant ?? 'acme', user: over.user ?? 'alice', permissions: over.permissions });

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.register({ dataSource: () => db.options(), jwtSecret: SECRET })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  describe('authentication', () => {
    it('answers 401 without a token, saying how to send one', async () => {
      const res = await request(app.getHttpServer()).post('/agents/trader/runs').send({ goal: 'buy 10 ACME' });
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/Missing bearer token/);
    });

    it('answers 401 for a token signed with another secret', async () => {
      const forged = mintToken('another-secret-which-is-also-long-enough-000000', { tenant: 'acme', user: 'mallory' });
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${forged}`)
        .send({ goal: 'x' });
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/signature or format is invalid/);
    });

    it('answers 401 for an unsigned (alg none) token and for garbage', async () => {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'mallory', tenant: 'acme', permissions: ['agent:run'] })}.`;
      for (const t of [unsigned, 'garbage', `Basic ${token()}`]) {
        const header = t.startsWith('Basic') ? t : `Bearer ${t}`;
        const res = await request(app.getHttpServer()).get('/agents/trader/policy').set('Authorization', header);
        expect(res.status).toBe(401);
      }
    });

    it('answers 401 for an expired token and one without a tenant', async () => {
      const expired = mintToken(SECRET, { tenant: 'acme', user: 'alice', expiresIn: '-10s' });
      const res = await request(app.getHttpServer()).get('/agents').set('Authorization', `Bearer ${expired}`);
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/expired/);
      const noTenant = mintToken(SECRET, { tenant: '', user: 'alice' });
      const res2 = await request(app.getHttpServer()).get('/agents').set('Authorization', `Bearer ${noTenant}`);
      expect(res2.status).toBe(401);
      expect(res2.body.message).toMatch(/tenant/);
    });

    it('answers 403 naming the missing permission', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token({ permissions: ['agent:read'] })}`)
        .send({ goal: 'buy 10 ACME' });
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/Missing permission: agent:run/);
    });

    it('lets the health check through without a token', async () => {
      await request(app.getHttpServer()).get('/health').expect(200, { status: 'ok' });
    });
  });

  describe('POST /agents/:name/runs', () => {
    it('runs the trader: quote, then approval.submit; priced by the desk, the order waits for a human (the trader may not execute), with audit rows', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token()}`)
        .set('x-request-id', 'e2e-run-0001')
        .send({ goal: 'Buy 5 ACME please' });
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe('e2e-run-0001');
      const body = res.body;
      expect(body.runId).toBe('e2e-run-0001');
      expect(body.stoppedReason).toBe('final');
      const calls = body.steps.flatMap((s: { toolCalls: unknown[] }) => s.toolCalls);
      expect(calls.map((c: { name: string; decision: string; cause: string | null }) => [c.name, c.decision, c.cause])).toEqual([
        ['market.quote', 'allowed', null],
        ['approval.submit', 'allowed', null],
      ]);
      expect(JSON.parse(calls[0].observation)).toEqual({ symbol: 'ACME', price: 101.25, currency: 'USD' });
      expect(JSON.parse(calls[1].observation)).toMatchObject({ verdict: 'execute_not_permitted', status: 'pending', amount: 506.25 });
      expect(body.pendingApprovals).toEqual([expect.objectContaining({ verdict: 'execute_not_permitted', skill: 'approval.submit' })]);
      expect(body.answer).toMatch(/needs human approval/);

      const ds = app.get<DataSource>(getDataSourceToken());
      expect(await ds.query('SELECT id FROM sample_orders WHERE run_id = $1', ['e2e-run-0001'])).toEqual([]);

      const audit = await app.get(AgentAuditLog).query({ runId: 'e2e-run-0001' });
      expect(audit.map((a) => [a.skill, a.decision, a.cause, a.tenantId, a.userId])).toEqual([
        ['market.quote', 'allowed', null, 'acme', 'alice'],
        ['approval.submit', 'allowed', null, 'acme', 'alice'],
      ]);
    });

    it('sees only the caller tenant data (globex has its own ACME price)', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token({ tenant: 'globex', user: 'gina' })}`)
        .send({ goal: 'buy 1 ACME' });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.steps[0].toolCalls[0].observation)).toEqual({ symbol: 'ACME', price: 99.9, currency: 'EUR' });
    });

    it('refuses a skill whose permission the caller lacks, and the model sees why', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token({ permissions: ['agent:run'] })}`)
        .send({ goal: 'buy 1 ACME' });
      expect(res.status).toBe(200);
      const first = res.body.steps[0].toolCalls[0];
      expect(first).toMatchObject({ name: 'market.quote', decision: 'allowed', cause: 'missing_permission', ok: false });
      expect(JSON.parse(first.observation)).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'market:read' });
    });

    it('validates the body: 400 naming the field', async () => {
      for (const body of [{}, { goal: '' }, { goal: 42 }, { goal: 'x', extra: true }]) {
        const res = await request(app.getHttpServer()).post('/agents/trader/runs').set('Authorization', `Bearer ${token()}`).send(body);
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.message)).toMatch(/goal|extra/);
      }
    });

    it('streams a run as Server-Sent Events with Accept: text/event-stream (the scripted model streams word by word); 401 stays JSON', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token()}`)
        .set('Accept', 'text/event-stream')
        .send({ goal: 'Buy 3 ACME' })
        .buffer(true)
        .parse(sseBody);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream');
      const events = parseEventStream(res.body as string);
      const final = events.at(-1)!;
      expect(final.event).toBe('final');
      const result = final.data as {
        answer: string;
        stoppedReason: string;
        steps: Array<{ index: number; text: string; toolCalls: unknown[] }>;
      };
      // Each tool call as the guard decided it, as the JSON result shows it.
      const { steps, deltas, textOf } = streamedRun(events);
      expect(steps.map((e) => [e.step, e.toolCall.name, e.toolCall.decision, e.toolCall.cause])).toEqual([
        [0, 'market.quote', 'allowed', null],
        [1, 'approval.submit', 'allowed', null],
      ]);
      expect(steps.map((e) => e.toolCall)).toEqual(result.steps.flatMap((s) => s.toolCalls));
      expect(deltas.length).toBeGreaterThan(result.steps.length); // word by word, not one piece per turn
      for (const step of result.steps) expect(textOf(step.index)).toBe(step.text);
      // The answer is the last turn's text, then the runtime's note on the proposal that waits for a human.
      const lastText = textOf(result.steps.at(-1)!.index);
      expect(result.answer.slice(0, lastText.length + 11)).toBe(`${lastText}\n\nProposal `);
      expect(result.answer).toMatch(/\(approval\.submit\) needs human approval/);
      expect(result).toMatchObject({
        stoppedReason: 'final',
        pendingApprovals: [expect.objectContaining({ verdict: 'execute_not_permitted' })],
      });

      const noToken = await request(app.getHttpServer()).post('/agents/trader/runs').set('Accept', 'text/event-stream').send({ goal: 'x' });
      expect(noToken.status).toBe(401);
      expect(noToken.headers['content-type']).toMatch(/^application\/json/);
    });

    it('answers 404 for an unknown agent', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/nobody/runs')
        .set('Authorization', `Bearer ${token()}`)
        .send({ goal: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/No agent named 'nobody'/);
    });
  });

  describe('the analyst reads the desk data with db.query', () => {
    it('counts only the caller desk orders', async () => {
      const ds = app.get<DataSource>(getDataSourceToken());
      const mine = await ds.query(`SELECT count(*) AS n FROM sample_orders WHERE tenant_id = $1`, ['globex']);
      const res = await request(app.getHttpServer())
        .post('/agents/analyst/runs')
        .set('Authorization', `Bearer ${token({ tenant: 'globex', user: 'gina' })}`)
        .send({ goal: 'How are the orders of my desk?' });
      expect(res.status).toBe(200);
      const call = res.body.steps[0].toolCalls.find((c: { name: string }) => c.name === 'db.query');
      expect(call.decision).toBe('allowed');
      const rows = JSON.parse(call.observation).rows as Array<{ orders: string }>;
      expect(rows.reduce((n, r) => n + Number(r.orders), 0)).toBe(Number(mine[0].n));
    });

    it('runs db.query under the fence the sample migration installed', async () => {
      const ds = app.get<DataSource>(getDataSourceToken());
      const status = await tenantFenceStatus(ds, fenceTablesFor({ entities: SAMPLE_DATA_ENTITIES }));
      expect(status).toEqual({ installed: true, role: 'zmodu_reader', problems: [], warnings: [] });
      const policies = await ds.query(
        `SELECT tablename, policyname FROM pg_policies WHERE tablename LIKE 'sample_%' AND policyname = 'zmodu_fence' ORDER BY 1`,
      );
      expect(policies.map((p: { tablename: string }) => p.tablename)).toEqual(['sample_instruments', 'sample_orders']);
    });
  });

  describe('staged execution: order.submit through the pipeline and the admin approval queue', () => {
    const lead = (tenant = 'acme', user = 'lee') => token({ tenant, user, permissions: ['approval:decide', 'desk:lead'] });
    const desk = () =>
      createSkillContext({
        guard: new Guard({ allow: ['approval.submit', 'order.submit', 'market.quote'], allowExecute: true }),
        tenantId: 'acme',
        userId: 'alice',
        permissions: ['order:submit'],
        agent: 'desk',
      });
    const read = async (id: string) =>
      (await request(app.getHttpServer()).get(`/admin/approvals/${id}`).set('Authorization', `Bearer ${lead()}`).expect(200)).body;
    let pendingId: string;

    it('the desk proposes three orders: one executes, one is over the limit, one waits for a human (said in the answer)', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/desk/runs')
        .set('Authorization', `Bearer ${token({ user: 'alice' })}`)
        .send({ goal: 'place the orders' });
      expect(res.status).toBe(200);
      const outcomes = res.body.steps[0].toolCalls.map((c: { observation: string }) => JSON.parse(c.observation));
      expect(outcomes.map((o: { verdict: string }) => o.verdict)).toEqual(['executed', 'risk_rejected', 'needs_human']);
      pendingId = outcomes[2].proposalId;
      expect(res.body.pendingApprovals).toEqual([
        expect.objectContaining({ proposalId: pendingId, verdict: 'needs_human', skill: 'approval.submit' }),
      ]);
      expect(res.body.answer).toContain(`Proposal ${pendingId} (approval.submit) needs human approval`);
    });

    it('a compromised model cannot call the staged order.submit itself (denied_staged), whatever its allow list says', async () => {
      const ds = app.get<DataSource>(getDataSourceToken());
      const before = (await ds.query(`SELECT count(*) AS n FROM sample_orders`))[0].n;
      const r = await app
        .get(SkillDispatcher)
        .dispatch(desk(), 'order.submit', { symbol: 'ACME', side: 'buy', qty: 1, limitPrice: 101.25 });
      expect(r.error).toEqual({ error: 'ToolDenied', reason: 'denied_staged' });
      expect((await ds.query(`SELECT count(*) AS n FROM sample_orders`))[0].n).toBe(before);
    });

    it('the amount is the desk price, not the model limit: a sell of 1,000,000 at 0.0001 is priced at market and rejected; a cheap-limit buy is priced at market', async () => {
      const sell = await app.get(SkillDispatcher).dispatch(desk(), 'approval.submit', {
        action: 'order.submit',
        payload: { symbol: 'ACME', side: 'sell', qty: 1_000_000, limitPrice: 0.0001 },
      });
      expect(sell.value).toMatchObject({
        verdict: 'risk_rejected',
        amount: 101_250_000,
        reason: expect.stringMatching(/tenant limit of 250000/),
      });
      const buy = await app.get(SkillDispatcher).dispatch(desk(), 'approval.submit', {
        action: 'order.submit',
        payload: { symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 0.0001 },
      });
      expect(buy.value).toMatchObject({
        verdict: 'needs_human',
        amount: 101_250,
        waitingFor: [{ name: 'desk lead' }, { name: 'second approver' }],
      });
      const withAmount = await app.get(SkillDispatcher).dispatch(desk(), 'approval.submit', {
        action: 'order.submit',
        payload: { symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 1 },
        amount: 1,
      });
      expect(withAmount.error).toMatchObject({ error: 'InvalidArguments' });
      const unknown = await app
        .get(SkillDispatcher)
        .dispatch(desk(), 'approval.submit', { action: 'order.submit', payload: { symbol: 'NOPE', side: 'buy', qty: 1, limitPrice: 1 } });
      expect(unknown.value).toMatchObject({
        verdict: 'propose_refused',
        proposalId: null,
        reason: expect.stringMatching(/no instrument NOPE/),
      });
    });

    it('lists the pending proposal for its tenant only, paginated, with its version and waiting step', async () => {
      const mine = await request(app.getHttpServer())
        .get('/admin/approvals?status=pending&limit=50')
        .set('Authorization', `Bearer ${lead()}`)
        .expect(200);
      expect(mine.body.items.map((p: { id: string }) => p.id)).toContain(pendingId);
      expect(mine.body).toMatchObject({ page: 1, limit: 50 });
      const paged = await request(app.getHttpServer())
        .get('/admin/approvals?limit=1&page=1')
        .set('Authorization', `Bearer ${lead()}`)
        .expect(200);
      expect(paged.body.items).toHaveLength(1);
      expect(paged.body.total).toBeGreaterThanOrEqual(2);
      const theirs = await request(app.getHttpServer())
        .get('/admin/approvals?status=pending')
        .set('Authorization', `Bearer ${lead('globex', 'gil')}`)
        .expect(200);
      expect(theirs.body.items.map((p: { id: string }) => p.id)).not.toContain(pendingId);
      expect(await read(pendingId)).toMatchObject({
        version: 1,
        amount: 24_050,
        waitingStep: { index: 0, name: 'desk lead', permission: 'desk:lead' },
      });
    });

    it('another tenant gets 404 for the proposal, on read and on decide (no existence oracle)', async () => {
      await request(app.getHttpServer())
        .get(`/admin/approvals/${pendingId}`)
        .set('Authorization', `Bearer ${lead('globex', 'gil')}`)
        .expect(404);
      await request(app.getHttpServer())
        .post(`/admin/approvals/${pendingId}/approve`)
        .set('Authorization', `Bearer ${lead('globex', 'gil')}`)
        .send({ reason: 'x', version: 1, step: 0 })
        .expect(404);
      const missing = await request(app.getHttpServer())
        .get('/admin/approvals/00000000-0000-4000-8000-000000000000')
        .set('Authorization', `Bearer ${lead('globex', 'gil')}`);
      expect(missing.status).toBe(404);
    });

    it('refuses the proposer (403), a caller without approval:decide (403), and bad input (400 naming the field)', async () => {
      const self = await request(app.getHttpServer())
        .post(`/admin/approvals/${pendingId}/approve`)
        .set('Authorization', `Bearer ${token({ user: 'alice' })}`)
        .send({ reason: 'mine', version: 1, step: 0 });
      expect(self.status).toBe(403);
      expect(self.body.message).toMatch(/proposer may not decide/);
      const noPerm = await request(app.getHttpServer())
        .post(`/admin/approvals/${pendingId}/approve`)
        .set('Authorization', `Bearer ${token({ user: 'zed', permissions: ['agent:run'] })}`)
        .send({ reason: 'x' });
      expect(noPerm.status).toBe(403);
      expect(noPerm.body.message).toMatch(/approval:decide/);
      for (const [body, field] of [
        [{}, 'reason'],
        [{ reason: 'ok' }, 'version'],
        [{ reason: 'ok', version: 1 }, 'step'],
        [{ reason: 'ok', version: 'one', step: 0 }, 'version'],
      ] as const) {
        const bad = await request(app.getHttpServer())
          .post(`/admin/approvals/${pendingId}/approve`)
          .set('Authorization', `Bearer ${lead()}`)
          .send(body);
        expect(bad.status).toBe(400);
        expect(bad.body.field).toBe(field);
      }
      const badId = await request(app.getHttpServer()).get('/admin/approvals/not-a-uuid').set('Authorization', `Bearer ${lead()}`);
      expect(badId.status).toBe(400);
      expect(badId.body.field).toBe('id');
      const badPage = await request(app.getHttpServer()).get('/admin/approvals?page=zero').set('Authorization', `Bearer ${lead()}`);
      expect(badPage.status).toBe(400);
      expect(badPage.body.field).toBe('page');
      const badStatus = await request(app.getHttpServer()).get('/admin/approvals?status=sideways').set('Authorization', `Bearer ${lead()}`);
      expect(badStatus.status).toBe(400);
      expect(badStatus.body.field).toBe('status');
      await request(app.getHttpServer()).get('/admin/approvals').expect(401);
    });

    it('a stale version or a wrong step is 409 with the current version, and nothing executes', async () => {
      const ds = app.get<DataSource>(getDataSourceToken());
      const r = await app.get(SkillDispatcher).dispatch(desk(), 'approval.submit', {
        action: 'order.submit',
        payload: { symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 101.25 },
      });
      const id = (r.value as { proposalId: string }).proposalId;
      const first = await read(id);
      expect(first).toMatchObject({ version: 1, waitingStep: { index: 0 } });
      await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'step 1 ok', version: 1, step: 0 })
        .expect(200);
      // max read step 1 at version 1; lee signed it meanwhile: max's approval is not recorded as step 2.
      const stale = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead('acme', 'max')}`)
        .send({ reason: 'ok', version: 1, step: 0 });
      expect(stale.status).toBe(409);
      expect(stale.body.current).toEqual({ status: 'pending', version: 2, step: 1 });
      const wrongStep = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead('acme', 'max')}`)
        .send({ reason: 'ok', version: 2, step: 0 });
      expect(wrongStep.status).toBe(409);
      expect(wrongStep.body.current).toMatchObject({ version: 2, step: 1 });
      expect((await read(id)).decisions).toHaveLength(1);
      expect((await ds.query(`SELECT count(*) AS n FROM sample_orders WHERE run_id = $1`, [desk().runId]))[0].n).toBe('0');
      const done = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead('acme', 'max')}`)
        .send({ reason: 'ok', version: 2, step: 1 });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ verdict: 'executed', result: { status: 'submitted', qty: 1000, approvers: ['lee', 'max'] } });
      const audit = await app.get(AgentAuditLog).query({ proposalId: id });
      expect(audit).toMatchObject([{ skill: 'order.submit', outcome: 'ok', approvers: ['lee', 'max'], tenantId: 'acme', userId: 'alice' }]);
    });

    it('an approval with an edit that crosses a threshold gets the extra step, signed by others; an edit over the limit is 422; both payloads are recorded', async () => {
      const r = await app.get(SkillDispatcher).dispatch(desk(), 'approval.submit', {
        action: 'order.submit',
        payload: { symbol: 'ACME', side: 'buy', qty: 200, limitPrice: 101.25 },
      });
      const id = (r.value as { proposalId: string }).proposalId;
      const tooBig = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'more', version: 1, step: 0, payload: { symbol: 'ACME', side: 'buy', qty: 5000, limitPrice: 101.25 } });
      expect(tooBig.status).toBe(422);
      expect(tooBig.body.message).toMatch(/tenant limit/);
      const edited = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'make it 1000', version: 1, step: 0, payload: { symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 101.25 } });
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({
        verdict: 'approved_pending_next_step',
        amount: 101_250,
        version: 2,
        waitingFor: [{ name: 'desk lead' }, { name: 'second approver' }],
      });
      const after = await read(id);
      expect(after.decisions[0].edit).toMatchObject({
        before: { amount: 20_250, payload: { qty: 200 } },
        after: { amount: 101_250, payload: { qty: 1000 } },
      });
    });

    it('a desk lead approves the version read: the order executes once; a second decision is 409', async () => {
      const res = await request(app.getHttpServer())
        .post(`/admin/approvals/${pendingId}/approve`)
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'within the desk mandate', version: 1, step: 0 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        verdict: 'executed',
        status: 'executed',
        result: { status: 'submitted', symbol: 'GLOBEX', qty: 500 },
      });
      const ds = app.get<DataSource>(getDataSourceToken());
      const orders = await ds.query(
        `SELECT count(*) AS n FROM sample_orders WHERE id = $1 AND tenant_id = 'acme' AND status = 'submitted'`,
        [res.body.result.orderId],
      );
      expect(orders[0].n).toBe('1');
      const again = await request(app.getHttpServer())
        .post(`/admin/approvals/${pendingId}/reject`)
        .set('Authorization', `Bearer ${lead('acme', 'max')}`)
        .send({ reason: 'late', version: 2, step: 0 });
      expect(again.status).toBe(409);
      const detail = await read(pendingId);
      expect(detail).toMatchObject({
        status: 'executed',
        decisions: [{ decidedBy: 'lee', decision: 'approve', reason: 'within the desk mandate', version: 1 }],
      });
    });

    it('a rejection closes a proposal', async () => {
      const run = await request(app.getHttpServer())
        .post('/agents/desk/runs')
        .set('Authorization', `Bearer ${token({ user: 'alice' })}`)
        .send({ goal: 'again' });
      const id = run.body.pendingApprovals[0].proposalId;
      const res = await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/reject`)
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'not today', version: 1, step: 0 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ verdict: 'rejected_by_human', status: 'rejected' });
      await request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', `Bearer ${lead('acme', 'max')}`)
        .send({ reason: 'x', version: 2, step: 0 })
        .expect(409);
    });
  });

  describe('operations: command.execute through the outbox, notification.send', () => {
    it('cancels a draft order once per run id, publishes the event, notes it on the desk log', async () => {
      const ds = app.get<DataSource>(getDataSourceToken());
      for (const tenant of ['acme', 'globex'])
        await ds.query(
          `INSERT INTO sample_orders (tenant_id, user_id, symbol, side, qty, limit_price, status, run_id) VALUES ($1, 'dora', 'ACME', 'buy', 3, 100, 'draft', 'seed-draft')`,
          [tenant],
        );
      const [draft] = await ds.query(`SELECT id FROM sample_orders WHERE tenant_id = 'acme' AND status = 'draft' LIMIT 1`);
      const ops = token({ user: 'olga', permissions: ['agent:run', 'command:execute', 'admin:outbox'] });
      const run = () =>
        request(app.getHttpServer())
          .post('/agents/ops/runs')
          .set('Authorization', `Bearer ${ops}`)
          .set('x-request-id', 'ops-run-0001')
          .send({ goal: `cancel ${draft.id}` });
      const first = await run();
      expect(first.status).toBe(200);
      const [cmd] = first.body.steps[0].toolCalls;
      const [note] = first.body.steps[1].toolCalls;
      expect(first.body.answer).toBe('Cancelled and noted on the desk log.');
      expect(cmd).toMatchObject({ name: 'command.execute', decision: 'allowed', ok: true });
      const { eventId, replayed } = JSON.parse(cmd.observation);
      expect(replayed).toBe(false);
      expect(JSON.parse(note.observation)).toEqual({ channel: 'desk-log', delivered: true });
      expect((await ds.query('SELECT status FROM sample_orders WHERE id = $1', [draft.id]))[0].status).toBe('cancelled');
      // The same run id again: the stored event, and nothing runs twice.
      const again = await run();
      expect(JSON.parse(again.body.steps[0].toolCalls[0].observation)).toEqual({ eventId, replayed: true });
      // The relay delivers the event (it polls every second).
      let status = '';
      for (let i = 0; i < 50 && status !== 'delivered'; i++) {
        const ev = await request(app.getHttpServer()).get(`/admin/outbox/${eventId}`).set('Authorization', `Bearer ${ops}`);
        status = ev.body.status;
        if (status !== 'delivered') await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe('delivered');
      // Another desk's order is not found, and nothing is written.
      const [theirs] = await ds.query(`SELECT id FROM sample_orders WHERE tenant_id = 'globex' LIMIT 1`);
      const cross = await request(app.getHttpServer())
        .post('/agents/ops/runs')
        .set('Authorization', `Bearer ${ops}`)
        .send({ goal: `cancel ${theirs.id}` });
      expect(JSON.parse(cross.body.steps[0].toolCalls[0].observation)).toMatchObject({ error: 'SkillFailed', reason: 'not_found' });
      // The agent says it failed, and notes nothing.
      expect(cross.body.answer).toMatch(/^The order was NOT cancelled: not_found/);
      expect(cross.body.steps.flatMap((st: { toolCalls: Array<{ name: string }> }) => st.toolCalls.map((c) => c.name))).toEqual([
        'command.execute',
      ]);
      expect((await ds.query('SELECT status FROM sample_orders WHERE id = $1', [theirs.id]))[0].status).not.toBe('cancelled');
    });
  });

  describe('GET /agents/:name/policy', () => {
    it('returns the auditPolicy report: the trader proposes and lists no execute skill, the analyst is healthy', async () => {
      const trader = await request(app.getHttpServer()).get('/agents/trader/policy').set('Authorization', `Bearer ${token()}`).expect(200);
      expect(trader.body).toMatchObject({
        agent: 'trader',
        inert: false,
        hasClassBlindSpot: false,
        classDeniedTools: [],
        unknownTools: [],
      });
      const analyst = await request(app.getHttpServer())
        .get('/agents/analyst/policy')
        .set('Authorization', `Bearer ${token()}`)
        .expect(200);
      expect(analyst.body).toMatchObject({
        inert: false,
        hasClassBlindSpot: false,
        effectiveTools: ['db.query', 'entity.list', 'market.quote'],
      });
    });
  });
});
