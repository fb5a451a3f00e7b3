import { INestApplication } from '@nestjs/common';
import { AgentWorker } from '@zmodu/agent';
import { AgentAuditLog } from '@zmodu/guard';
import { connect } from 'node:net';
import { DataSource } from 'typeorm';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** One raw HTTP/1.1 exchange (a request target supertest cannot send, e.g. the absolute form): the status line and headers, and the body. */
async function rawGet(
  app: INestApplication,
  target: string,
  post?: { authorization: string; body: string },
): Promise<{ head: string; body: string }> {
  const server = app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const text = await new Promise<string>((resolve, reject) => {
    let out = '';
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        post
          ? `POST ${target} HTTP/1.1\r\nHost: victim.example\r\nAuthorization: ${post.authorization}\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(post.body)}\r\nConnection: close\r\n\r\n${post.body}`
          : `GET ${target} HTTP/1.1\r\nHost: victim.example\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
  const at = text.indexOf('\r\n\r\n');
  return { head: text.slice(0, at), body: text.slice(at + 4) };
}

const header = (head: string, name: string) =>
  head
    .split('\r\n')
    .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    ?.slice(name.length + 1)
    .trim();

/** Red team of the approvals console's server side (issue 15). */
describe('red team: the approvals console API', () => {
  const apps = sampleAppsOnTestDatabase(SECRET);
  const bearer = (tenant: string, user: string, permissions: string[]) => `Bearer ${mintToken(SECRET, { tenant, user, permissions })}`;
  const lead = (tenant = 'acme', user = 'lee') => bearer(tenant, user, ['approval:decide', 'desk:lead']);
  const trader = (user: string) => bearer('acme', user, ['agent:run', 'order:submit']);

  it('the redirect to /admin/console/ and the apiBase of config.json never name another origin (absolute-form request target)', async () => {
    const app = await apps.boot();
    const redirect = await rawGet(app, 'http://evil.example/admin/console?x=1');
    expect(redirect.head).toMatch(/^HTTP\/1\.1 308/);
    expect(header(redirect.head, 'location')).toBe('/admin/console/?x=1');
    const config = await rawGet(app, 'http://evil.example/admin/console/config.json');
    expect(JSON.parse(config.body).apiBase).toBe('/admin');
  });

  it('config.json names the admin API however its own path is spelled (case, a trailing slash)', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    expect((await http.get('/ADMIN/CONSOLE/CONFIG.JSON').expect(200)).body.apiBase).toBe('/ADMIN');
    expect((await http.get('/admin/console/config.json/').expect(200)).body.apiBase).toBe('/admin');
  });

  it('a file the console does not have is a 404 no cache keeps (not cached for a year as immutable)', async () => {
    const app = await apps.boot();
    const res = await request(app.getHttpServer()).get('/admin/console/assets/index-next-release.js').expect(404);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('a preview takes no larger body than the approval it previews (413 as for approve)', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    const id = '00000000-0000-4000-8000-000000000000';
    const payload = { symbol: 'ACME', pad: 'x'.repeat(20_000) };
    // Express matches routes without regard to case: so does the limit.
    for (const [approve, preview] of [
      ['approve', 'preview'],
      ['APPROVE', 'Preview'],
    ]) {
      const base = approve === 'approve' ? '/admin/approvals' : '/ADMIN/Approvals';
      await http
        .post(`${base}/${id}/${approve}`)
        .set('Authorization', lead())
        .send({ version: 1, step: 0, reason: 'ok', payload })
        .expect(413);
      await http.post(`${base}/${id}/${preview}`).set('Authorization', lead()).send({ version: 1, payload }).expect(413);
    }
    // Nor does a request target in absolute form escape it.
    const body = JSON.stringify({ version: 1, step: 0, reason: 'ok', payload });
    for (const verb of ['approve', 'preview']) {
      const res = await rawGet(app, `http://victim.example/admin/approvals/${id}/${verb}`, { authorization: lead(), body });
      expect(res.head).toMatch(/^HTTP\/1\.1 413/);
    }
  });

  it('a preview of a proposal past its expiry (not yet marked expired) is the 409 an approval gets, not ok: true', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    const res = await http.post('/agents/desk/runs').set('Authorization', trader('alice')).send({ goal: 'place the orders' }).expect(200);
    const pending = JSON.parse(res.body.steps[0].toolCalls[2].observation) as { proposalId: string; version: number };
    await app
      .get(DataSource)
      .query(`UPDATE zmodu_proposals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [pending.proposalId]);
    // Nothing has read it since it expired (a read marks it expired): the preview is the first to see it.
    const payload = { symbol: 'ACME', side: 'buy', qty: 10, limitPrice: 101.25 };
    const preview = await http
      .post(`/admin/approvals/${pending.proposalId}/preview`)
      .set('Authorization', lead())
      .send({ version: pending.version, payload });
    expect(preview.status).toBe(409);
    expect(preview.body.current).toMatchObject({ status: 'expired' });
    await http
      .post(`/admin/approvals/${pending.proposalId}/approve`)
      .set('Authorization', lead())
      .send({ version: pending.version, step: 0, reason: 'ok', payload })
      .expect(409);
  });

  it('an outage of the database while the amount of an edit is computed is a 503 with Retry-After (preview and approve), not a refusal', async () => {
    const app = await apps.boot();
    const http = request(app.getHttpServer());
    const res = await http.post('/agents/desk/runs').set('Authorization', trader('alice')).send({ goal: 'place the orders' }).expect(200);
    const pending = JSON.parse(res.body.steps[0].toolCalls[2].observation) as { proposalId: string; version: number };
    const manager = app.get(DataSource).manager;
    const query = manager.query.bind(manager);
    // The database goes away as the desk's amount function reads its prices: that read and every one after it fail.
    let down = false;
    const spy = jest.spyOn(manager, 'query').mockImplementation((sql: string, params?: Parameters<typeof query>[1]) => {
      down ||= sql.includes('sample_instruments');
      return down
        ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
        : query(sql, params);
    });
    const payload = { symbol: 'ACME', side: 'buy', qty: 20, limitPrice: 101.25 };
    const preview = await http
      .post(`/admin/approvals/${pending.proposalId}/preview`)
      .set('Authorization', lead())
      .send({ version: pending.version, payload });
    expect(preview.status).toBe(503);
    expect(preview.headers['retry-after']).toBeDefined();
    expect(JSON.stringify(preview.body)).not.toMatch(/ECONNREFUSED|5432/);
    down = false;
    const approve = await http
      .post(`/admin/approvals/${pending.proposalId}/approve`)
      .set('Authorization', lead())
      .send({ version: pending.version, step: 0, reason: 'ok', payload });
    expect(approve.status).toBe(503);
    expect(approve.headers['retry-after']).toBeDefined();
    spy.mockRestore();
  });

  /** A worker run of the desk agent (three proposals), or of `agent`, for `user`, finished: its run id. */
  const workerRun = async (app: INestApplication, user: string, goal: string, tenantId = 'acme', agent = 'desk') => {
    const worker = app.get(AgentWorker);
    const done = new Promise<void>((resolve) => worker.onResult(() => resolve()));
    const { runId } = await worker.post(goal, {
      agent,
      tenantId,
      userId: user,
      permissions: ['agent:run', 'order:submit'],
    });
    await done;
    return runId;
  };

  /** A direct run of the desk agent by `user` under the request id `runId` (the sample's x-request-id): its pending proposal. */
  const directRunUnder = async (app: INestApplication, user: string, runId: string) => {
    const res = await request(app.getHttpServer())
      .post('/agents/desk/runs')
      .set('Authorization', trader(user))
      .set('x-request-id', runId)
      .send({ goal: 'place the orders' })
      .expect(200);
    expect(res.body.runId).toBe(runId);
    await app.get(AgentAuditLog).flush();
    return JSON.parse(res.body.steps[0].toolCalls[2].observation).proposalId as string;
  };

  /**
   * The sample lets a caller name its request id (x-request-id), which is the run id of a direct run: a proposal can
   * carry the run id of a worker run it did not come from. GET :id/run must not show that run (another user's goal and
   * steps) as the run that made the proposal, nor another user's audited calls.
   */
  it("GET :id/run shows the worker run only when that run made the proposal (a borrowed run id shows neither another user's run nor calls)", async () => {
    const app = await apps.boot();
    const runId = await workerRun(app, 'alice', 'place the orders');
    const malloryPending = await directRunUnder(app, 'mallory', runId);
    const http = request(app.getHttpServer());
    const shown = (await http.get(`/admin/approvals/${malloryPending}/run`).set('Authorization', lead()).expect(200)).body;
    expect(shown.runId).toBe(runId);
    expect(shown.run).toBeNull();
    expect(shown.calls.length).toBeGreaterThan(0);
    expect(shown.calls.every((c: { userId: string }) => c.userId === 'mallory')).toBe(true);
    // alice's own proposal still shows her run and her calls only
    const list = (await http.get('/admin/approvals?status=pending').set('Authorization', lead()).expect(200)).body;
    const alices = list.items.find((p: { runId: string; proposer: string }) => p.runId === runId && p.proposer === 'alice');
    const hers = (await http.get(`/admin/approvals/${alices.id}/run`).set('Authorization', lead()).expect(200)).body;
    expect(hers.run).toMatchObject({ id: runId, agent: 'desk', status: 'waiting' });
    expect(hers.calls.length).toBeGreaterThan(0);
    expect(hers.calls.every((c: { userId: string }) => c.userId === 'alice')).toBe(true);
  });

  it("GET :id/run does not show the proposer's own worker run (its harmless goal) for a proposal another of their runs made under its id", async () => {
    const app = await apps.boot();
    // Another agent's run: under the same run id the desk's proposals are new ones (the same agent's run would get its
    // own earlier proposals replayed, made by that run, which is then rightly the run shown).
    const runId = await workerRun(app, 'mallory', 'check the prices only', 'acme', 'trader');
    const pending = await directRunUnder(app, 'mallory', runId);
    const shown = (await request(app.getHttpServer()).get(`/admin/approvals/${pending}/run`).set('Authorization', lead()).expect(200)).body;
    expect(shown.run).toBeNull();
  });

  it("a run id borrowed from another tenant's run shows nothing of that tenant; schema, preview and run need the decide permission", async () => {
    const app = await apps.boot();
    const runId = await workerRun(app, 'gina', 'place the orders', 'globex');
    const pending = await directRunUnder(app, 'mallory', runId);
    const http = request(app.getHttpServer());
    const shown = (await http.get(`/admin/approvals/${pending}/run`).set('Authorization', lead()).expect(200)).body;
    expect(shown.run).toBeNull();
    expect(shown.calls.every((c: { tenantId: string; userId: string }) => c.tenantId === 'acme' && c.userId === 'mallory')).toBe(true);
    const globexLead = lead('globex', 'gil');
    const theirs = (await http.get('/admin/approvals').set('Authorization', globexLead).expect(200)).body.items;
    expect(theirs.length).toBeGreaterThan(0);
    for (const p of theirs as Array<{ id: string; payload: unknown }>) {
      await http.get(`/admin/approvals/${p.id}/run`).set('Authorization', lead()).expect(404);
      await http.get(`/admin/approvals/${p.id}/schema`).set('Authorization', lead()).expect(404);
      await http.post(`/admin/approvals/${p.id}/preview`).set('Authorization', lead()).send({ version: 1, payload: p.payload }).expect(404);
    }
    const noDecide = bearer('acme', 'lee', ['desk:lead']);
    await http.get(`/admin/approvals/${pending}/run`).set('Authorization', noDecide).expect(403);
    await http.post(`/admin/approvals/${pending}/preview`).set('Authorization', noDecide).send({ version: 1, payload: {} }).expect(403);
    await http.get(`/admin/approvals/${pending}/run`).expect(401);
    await http.post(`/admin/approvals/${pending}/preview`).send({ version: 1, payload: {} }).expect(401);
  });

  it('GET :id/run, :id/schema and POST :id/preview with the database gone: 503 with Retry-After', async () => {
    const app = await apps.boot();
    const runId = await workerRun(app, 'alice', 'place the orders');
    const http = request(app.getHttpServer());
    const list = (await http.get('/admin/approvals?status=pending').set('Authorization', lead()).expect(200)).body;
    const p = list.items.find((x: { runId: string }) => x.runId === runId);
    const ds = app.get(DataSource);
    const gone = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const spies = [jest.spyOn(ds, 'query').mockImplementation(gone), jest.spyOn(ds.manager, 'query').mockImplementation(gone)];
    const answers = [
      await http.get(`/admin/approvals/${p.id}/run`).set('Authorization', lead()),
      await http.get(`/admin/approvals/${p.id}/schema`).set('Authorization', lead()),
      await http.post(`/admin/approvals/${p.id}/preview`).set('Authorization', lead()).send({ version: p.version, payload: p.payload }),
    ];
    for (const spy of spies) spy.mockRestore();
    expect(answers.map((a) => [a.status, a.headers['retry-after']])).toEqual([
      [503, '5'],
      [503, '5'],
      [503, '5'],
    ]);
  });
});
