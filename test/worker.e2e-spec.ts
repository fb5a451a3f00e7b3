import type { INestApplication } from '@nestjs/common';
import { AgentWorker } from '@zmodu/agent';
import type { ModelProvider, ModelRequest, ModelTurn } from '@zmodu/agent';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { parseEventStream, readEvents, sseBody, streamedRun } from './support/event-stream';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const token = (tenant = 'acme', user = 'alice') => `Bearer ${mintToken(SECRET, { tenant, user })}`;

/** A model that holds its turn until the run is aborted (the app shuts down): it keeps a worker slot busy. */
class HoldingModel implements ModelProvider {
  readonly name = 'holding';
  started = 0;
  async complete(req: ModelRequest): Promise<ModelTurn> {
    this.started++;
    return new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
  }
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A desk lead approves a proposal over HTTP, on the version and step read (a decision binds to what was read). */
async function approveOverHttp(app: INestApplication, proposalId: string): Promise<void> {
  const http = () => request(app.getHttpServer());
  const lead = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] })}`;
  const proposal = (await http().get(`/admin/approvals/${proposalId}`).set('Authorization', lead).expect(200)).body;
  await http()
    .post(`/admin/approvals/${proposalId}/approve`)
    .set('Authorization', lead)
    .send({ version: proposal.version, step: proposal.waitingStep.index, reason: 'fine' })
    .expect(200);
}

describe('sample app: the AgentWorker over HTTP (POST /agents/:name/goals, GET /agents/runs/:id)', () => {
  const { boot, forget } = sampleAppsOnTestDatabase(SECRET);

  it('accepts a goal with 202 { runId }, runs it in the background for the caller, and shows the run to its tenant only', async () => {
    const app = await boot();
    const http = () => request(app.getHttpServer());
    const posted = await http().post('/agents/trader/goals').set('Authorization', token()).send({ goal: 'What is the price of ACME?' });
    expect(posted.status).toBe(202);
    expect(posted.body).toEqual({ runId: expect.any(String) });
    const { runId } = posted.body as { runId: string };

    let run: Record<string, unknown> = {};
    // The trader quotes, then proposes the order: the run waits for a human, holding no slot.
    await until(async () => {
      run = (await http().get(`/agents/runs/${runId}`).set('Authorization', token())).body;
      return run.status === 'waiting' || run.status === 'succeeded' || run.status === 'failed';
    }, 'the run to wait');
    expect(run).toMatchObject({ id: runId, status: 'waiting', waitingFor: [expect.any(String)] });
    const proposalId = (run.waitingFor as string[])[0];
    // A desk lead approves it over HTTP, on the version read; the run goes on with the execution's result.
    await approveOverHttp(app, proposalId);
    await until(async () => {
      run = (await http().get(`/agents/runs/${runId}`).set('Authorization', token())).body;
      return run.status === 'succeeded' || run.status === 'failed';
    }, 'the run to finish');
    expect(run).toMatchObject({
      id: runId,
      agent: 'trader',
      userId: 'alice',
      goal: 'What is the price of ACME?',
      status: 'succeeded',
      error: null,
    });
    expect(run.answer).toMatch(new RegExp(`^Approved by lee and submitted \\(proposal ${proposalId}\\)`));
    // The run with its journal: the quote, the proposal's wait, the decision, and the turn after it; the model's own
    // arguments are not shown (each call's record shows them as the dispatcher did).
    const journal = run.journal as Array<{ kind: string; turn?: { toolCalls: object[] } }>;
    expect(journal.map((e) => e.kind)).toEqual(['turn', 'call', 'turn', 'intent', 'wait', 'decision', 'turn']);
    expect(journal.flatMap((e) => e.turn?.toolCalls ?? []).every((c) => !('arguments' in c))).toBe(true);
    expect(typeof run.answer).toBe('string');
    expect(Array.isArray(run.steps)).toBe(true);
    expect(run).not.toHaveProperty('leaseOwner');

    const other = await http().get(`/agents/runs/${runId}`).set('Authorization', token('globex', 'bob'));
    expect(other.status).toBe(404);
    expect((await http().get('/agents/runs/no-such-run').set('Authorization', token())).status).toBe(404);
    expect((await http().get(`/agents/runs/${runId}`)).status).toBe(401);
    expect((await http().post('/agents/ghost/goals').set('Authorization', token()).send({ goal: 'x' })).status).toBe(404);
    expect((await http().post('/agents/trader/goals').set('Authorization', token()).send({ goal: '' })).status).toBe(400);
    expect((await http().post('/agents/trader/goals').send({ goal: 'x' })).status).toBe(401);
  });

  it('a synchronous run (POST /agents/:name/runs) that proposes answers 202 at waiting, and goes on in the background after the approval', async () => {
    const app = await boot();
    const http = () => request(app.getHttpServer());
    const waiting = await http()
      .post('/agents/trader/runs')
      .set('Authorization', token())
      .set('Prefer', 'wait=5, respond-async')
      .send({ goal: 'What is the price of ACME?' });
    expect(waiting.status).toBe(202);
    expect(waiting.headers['preference-applied']).toBe('respond-async');
    expect(waiting.headers['x-run-id']).toBe(waiting.body.runId); // sent first: a lost answer leaves the caller its run
    expect(waiting.body).toMatchObject({
      status: 'waiting',
      stoppedReason: 'waiting',
      runId: expect.any(String),
      waitingFor: [expect.any(String)],
      waitUntil: expect.any(String),
      pendingApprovals: [expect.objectContaining({ verdict: 'execute_not_permitted', skill: 'approval.submit' })],
    });
    const { runId, waitingFor } = waiting.body as { runId: string; waitingFor: string[] };
    const [proposalId] = waitingFor;
    expect(waiting.body.pendingApprovals[0].proposalId).toBe(proposalId);
    // The run is stored like a posted one: its tenant reads it, waiting, another tenant does not.
    const stored = (await http().get(`/agents/runs/${runId}`).set('Authorization', token()).expect(200)).body;
    expect(stored).toMatchObject({ id: runId, status: 'waiting', waitingFor: [proposalId] });
    expect((await http().get(`/agents/runs/${runId}`).set('Authorization', token('globex', 'bob'))).status).toBe(404);
    // Nothing but the recorded decision resumes it: a resume asked now finds the proposal pending.
    const worker = app.get(AgentWorker);
    expect((await worker.resume('acme', runId))?.status).toBe('waiting');
    expect(await worker.resume('globex', runId)).toBeNull();

    await approveOverHttp(app, proposalId);
    let run: Record<string, unknown> = {};
    await until(async () => {
      run = (await http().get(`/agents/runs/${runId}`).set('Authorization', token())).body;
      return run.status === 'succeeded' || run.status === 'failed';
    }, 'the run to finish');
    expect(run).toMatchObject({ id: runId, status: 'succeeded', error: null, userId: 'alice' });
    expect(run.answer).toMatch(new RegExp(`^Approved by lee and submitted \\(proposal ${proposalId}\\)`));
    const journal = run.journal as Array<{ kind: string; seq: number }>;
    expect(journal.map((e) => e.kind)).toEqual(['turn', 'call', 'turn', 'intent', 'wait', 'decision', 'turn']);
    expect(run.journalNext).toBeNull();
    // The journal page by page: journalNext names where the next page starts; a bad bound is a 400 naming it.
    const pages: Array<{ kind: string; seq: number }[]> = [];
    let after: number | null = -1;
    while (after !== null) {
      const got = (await http().get(`/agents/runs/${runId}?journalAfter=${after}&journalLimit=3`).set('Authorization', token()).expect(200))
        .body as { journal: { kind: string; seq: number }[]; journalNext: number | null };
      pages.push(got.journal);
      after = got.journalNext;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(journal);
    for (const bad of ['journalLimit=0', 'journalLimit=1001', 'journalAfter=x', 'journalAfter=-2', 'journalLimit=1&journalLimit=2']) {
      const refused = await http().get(`/agents/trader/runs/${runId}?${bad}`).set('Authorization', token());
      expect([bad, refused.status, refused.body.field]).toEqual([bad, 400, bad.split('=')[0]]);
    }
  });

  it('a synchronous run that ends answers 200 with its result, its status and the id of its stored record', async () => {
    const app = await boot();
    const http = () => request(app.getHttpServer());
    const done = await http()
      .post('/agents/analyst/runs')
      .set('Authorization', token())
      .set('Prefer', 'respond-async')
      .send({ goal: 'How are the orders?' });
    expect(done.status).toBe(200);
    expect(done.headers['preference-applied']).toBeUndefined();
    expect(done.body).toMatchObject({ status: expect.stringMatching(/^(succeeded|failed)$/), runId: expect.any(String) });
    const stored = (await http().get(`/agents/runs/${done.body.runId}`).set('Authorization', token()).expect(200)).body;
    expect(stored).toMatchObject({ id: done.body.runId, status: done.body.status, answer: done.body.answer });
  });

  it('streamed with Prefer: respond-async, the run ends its stream with a waiting event; without it, the run goes on unstored as before', async () => {
    const app = await boot();
    const res = await request(app.getHttpServer())
      .post('/agents/trader/runs')
      .set('Authorization', token())
      .set('Accept', 'text/event-stream')
      .set('Prefer', 'respond-async')
      .send({ goal: 'Buy 3 ACME' })
      .buffer(true)
      .parse(sseBody);
    expect(res.status).toBe(200);
    const events = parseEventStream(res.body as string);
    expect(events.filter((e) => e.event === 'final')).toEqual([]);
    const last = events.at(-1)!;
    expect(last.event).toBe('waiting');
    const body = last.data as { runId: string; status: string; waitingFor: string[] };
    expect(body).toMatchObject({ status: 'waiting', waitingFor: [expect.any(String)] });
    const { steps } = streamedRun(events);
    expect(steps.map((e) => e.toolCall.name)).toEqual(['market.quote', 'approval.submit']);
    const stored = (await request(app.getHttpServer()).get(`/agents/runs/${body.runId}`).set('Authorization', token()).expect(200)).body;
    expect(stored).toMatchObject({ status: 'waiting', waitingFor: body.waitingFor });

    // Without the preference, the same run answers 200 as it always did: the model is told the proposal waits.
    const plain = await request(app.getHttpServer()).post('/agents/trader/runs').set('Authorization', token()).send({ goal: 'Buy 3 ACME' });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ stoppedReason: 'final', pendingApprovals: [expect.any(Object)] });
    expect(plain.body).not.toHaveProperty('status');
    expect((await request(app.getHttpServer()).get(`/agents/runs/${plain.body.runId}`).set('Authorization', token())).status).toBe(404);
  });

  it('follows a stored run as Server-Sent Events from its journal, and a client that reconnects with Last-Event-ID goes on after the wait', async () => {
    const app = await boot();
    await app.listen(0, '127.0.0.1');
    const base = await app.getUrl();
    const http = () => request(app.getHttpServer());
    const waiting = await http()
      .post('/agents/trader/runs')
      .set('Authorization', token())
      .set('Prefer', 'respond-async')
      .send({ goal: 'What is the price of ACME?' });
    expect(waiting.status).toBe(202);
    const { runId, waitingFor } = waiting.body as { runId: string; waitingFor: string[] };
    const auth = { authorization: token() };
    // What the run did up to its wait; the stream stays open while it waits (the client leaves after the waiting event).
    const first = await readEvents(`${base}/agents/runs/${runId}/events`, auth, (e) => e.event === 'waiting');
    expect(first.status).toBe(200);
    expect(first.events.map((e) => e.event)).toEqual(['turn', 'step', 'turn', 'waiting']);
    const waitEvent = first.events.at(-1)!;
    expect(waitEvent.data).toMatchObject({ proposalId: waitingFor[0], toolCall: { name: 'approval.submit' } });
    // The 202 named it: a client that saw the run in its POST goes on from there.
    expect(Number(waitEvent.id)).toBe(waiting.body.lastEventId);
    const ids = first.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);

    await approveOverHttp(app, waitingFor[0]);
    // Reconnected after the last event seen: the decision, the turn after it, then final; nothing seen before again.
    const rest = await readEvents(
      `${base}/agents/runs/${runId}/events`,
      { ...auth, 'last-event-id': String(waitEvent.id) },
      (e) => e.event === 'final',
    );
    expect(rest.events.map((e) => e.event)).toEqual(['decision', 'turn', 'final']);
    expect(rest.events[0].data).toMatchObject({ proposalId: waitingFor[0], status: 'executed' });
    expect(Number(rest.events[0].id)).toBeGreaterThan(Number(waitEvent.id));
    expect(rest.events[2].data).toMatchObject({ id: runId, status: 'succeeded' });
    expect(rest.events[2].data).not.toHaveProperty('tenantId');
    expect(rest.events[2].data).not.toHaveProperty('permissions');
    // Another tenant, an unknown run, a bad Last-Event-ID: plain HTTP errors, no stream.
    expect((await readEvents(`${base}/agents/runs/${runId}/events`, { authorization: token('globex', 'bob') }, () => true)).status).toBe(
      404,
    );
    expect((await readEvents(`${base}/agents/runs/nope/events`, auth, () => true)).status).toBe(404);
    expect((await readEvents(`${base}/agents/runs/${runId}/events`, { ...auth, 'last-event-id': 'x' }, () => true)).status).toBe(400);
    expect((await readEvents(`${base}/agents/runs/${runId}/events`, {}, () => true)).status).toBe(401);
  });

  it('answers 429 with Retry-After when the mailbox is full, and a shut-down run is retried at the next start', async () => {
    const model = new HoldingModel();
    const app = await boot({ seed: false, model: { provider: model }, worker: { concurrency: 1, mailboxSize: 1, shutdownGraceMs: 50 } });
    const post = (goal: string) => request(app.getHttpServer()).post('/agents/trader/goals').set('Authorization', token()).send({ goal });
    const running = await post('hold the slot');
    expect(running.status).toBe(202);
    await until(() => model.started === 1, 'the first goal to hold the only slot');
    const waiting = await post('wait in the mailbox');
    expect(waiting.status).toBe(202);
    const refused = await post('one too many');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body.message).toMatch(/mailbox is full/);
    await app.close();
    forget();

    const next = await boot({ seed: false, model: { provider: new HoldingModel() }, worker: { concurrency: 2, shutdownGraceMs: 50 } });
    const get = async (id: string) => (await request(next.getHttpServer()).get(`/agents/runs/${id}`).set('Authorization', token())).body;
    await until(async () => (await get(running.body.runId)).attempts === 2, 'the interrupted run to be retried');
    await until(async () => (await get(waiting.body.runId)).status === 'running', 'the queued run to start');
  });
});
