import type { ModelProvider, ModelRequest, ModelTurn } from '@zmodu/agent';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
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
    const lead = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] })}`;
    const proposal = (await http().get(`/admin/approvals/${proposalId}`).set('Authorization', lead).expect(200)).body;
    await http()
      .post(`/admin/approvals/${proposalId}/approve`)
      .set('Authorization', lead)
      .send({ version: proposal.version, step: proposal.waitingStep.index, reason: 'fine' })
      .expect(200);
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
