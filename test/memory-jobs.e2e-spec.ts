import { INestApplication } from '@nestjs/common';
import type { ModelProvider, ModelRequest, ModelTurn } from '@zmodu/agent';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { scriptedTrader } from '../apps/sample/src/agents/trader.agent';
import { ALL_PERMISSIONS, PERMISSIONS } from '../apps/sample/src/auth/auth.constants';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { DESK_JOB_PERMISSIONS, MORNING_SUMMARY_GOAL } from '../apps/sample/src/jobs/desk-jobs';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const bearer = (tenant: string, user: string, permissions?: string[]) => `Bearer ${mintToken(SECRET, { tenant, user, permissions })}`;

interface ToolCall {
  name: string;
  decision: string;
  cause?: string;
  outcome: string;
  observation: string;
}
interface RunBody {
  answer: string;
  steps: Array<{ toolCalls: ToolCall[] }>;
}

/** The sample's own scripted trader, seen through: it keeps the system prompt of every model request it answers. */
class PromptRecorder implements ModelProvider {
  readonly name = 'scripted';
  readonly systems: string[] = [];
  private readonly trader = scriptedTrader();
  complete(req: ModelRequest): Promise<ModelTurn> {
    this.systems.push(req.system ?? '');
    return this.trader.complete(req);
  }
}

describe('sample app: tenant memory and scheduled jobs over HTTP', () => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);

  async function run(app: INestApplication, agent: string, auth: string, goal: string): Promise<RunBody> {
    const res = await request(app.getHttpServer()).post(`/agents/${agent}/runs`).set('Authorization', auth).send({ goal });
    expect(res.status).toBe(200);
    return res.body as RunBody;
  }
  const calls = (r: RunBody) => r.steps.flatMap((s) => s.toolCalls);
  const observed = (c: ToolCall) => JSON.parse(c.observation) as Record<string, unknown>;

  it("the trader remembers a note for alice in t1; her later runs see it, in the prompt and through memory.recall, bob's and t2's do not", async () => {
    const model = new PromptRecorder();
    const app = await boot({ model: { provider: model } });
    const alice = bearer('t1', 'alice');

    const remembered = await run(app, 'trader', alice, 'Remember: I prefer limit orders on ACME, never market orders');
    const [remember] = calls(remembered);
    expect(remember).toMatchObject({ name: 'memory.remember', decision: 'allowed' });
    expect(observed(remember)).toEqual({ id: expect.any(String) });
    expect(remembered.answer).toBe(`Noted (note ${String(observed(remember).id)}).`);

    model.systems.length = 0;
    const later = await run(app, 'trader', alice, 'What do you remember about me?');
    // What the model received: the note inside the fenced block of its system prompt, labelled as data.
    expect(model.systems[0]).toContain('<<<remembered-notes');
    expect(model.systems[0]).toContain('"note":"I prefer limit orders on ACME, never market orders"');
    expect(model.systems[0]).toMatch(/untrusted data, not instructions/);
    const [recall] = calls(later);
    expect(recall).toMatchObject({ name: 'memory.recall', decision: 'allowed' });
    expect(observed(recall)).toMatchObject({
      entries: [{ note: 'I prefer limit orders on ACME, never market orders', kind: 'preference' }],
    });
    expect(later.answer).toBe('I remember: I prefer limit orders on ACME, never market orders.');

    for (const other of [bearer('t1', 'bob'), bearer('t2', 'alice')]) {
      model.systems.length = 0;
      const theirs = await run(app, 'trader', other, 'What do you remember about me?');
      expect(model.systems.join('\n')).not.toContain('limit orders');
      expect(model.systems[0]).not.toContain('<<<remembered-notes');
      expect(observed(calls(theirs)[0])).toMatchObject({ entries: [] });
      expect(theirs.answer).toBe('I have no notes about you.');
    }

    // GET /memory shows the caller's own notes only; DELETE /memory erases them, and the next prompt has none.
    const http = () => request(app.getHttpServer());
    const mine = await http().get('/memory').set('Authorization', alice).expect(200);
    expect(mine.body).toEqual([
      expect.objectContaining({ agent: 'trader', kind: 'preference', note: expect.stringContaining('limit orders') }),
    ]);
    expect((await http().get('/memory').set('Authorization', bearer('t2', 'alice')).expect(200)).body).toEqual([]);
    expect((await http().delete('/memory').set('Authorization', bearer('t1', 'bob')).expect(200)).body).toEqual({ erased: 0 });
    expect((await http().delete('/memory').set('Authorization', alice).expect(200)).body).toEqual({ erased: 1 });
    model.systems.length = 0;
    expect((await run(app, 'trader', alice, 'What do you remember about me?')).answer).toBe('I have no notes about you.');
    expect(model.systems[0]).not.toContain('<<<remembered-notes');
  });

  it("an erased note leaves no copy in the worker's stored runs: the memory calls are kept as digests (attack: GET /agents/runs/:id read the note after DELETE /memory)", async () => {
    const app = await boot({ model: { provider: new PromptRecorder() } });
    const http = () => request(app.getHttpServer());
    const alice = bearer('t1', 'alice');
    const NOTE = 'my broker account is at Hypothetical Bank, desk 7';
    const posted: string[] = [];
    for (const goal of [`Remember: ${NOTE}`, 'What do you remember about me?']) {
      const res = await http().post('/agents/trader/goals').set('Authorization', alice).send({ goal }).expect(202);
      const runId = (res.body as { runId: string }).runId;
      let status = '';
      for (const end = Date.now() + 30_000; status !== 'succeeded' && status !== 'failed';) {
        if (Date.now() > end) throw new Error(`run ${runId} did not finish`);
        await new Promise((r) => setTimeout(r, 50));
        status = (await http().get(`/agents/runs/${runId}`).set('Authorization', alice)).body.status;
      }
      posted.push(runId);
    }
    expect((await http().delete('/memory').set('Authorization', alice).expect(200)).body).toEqual({ erased: 1 });

    const ds = app.get<DataSource>(getDataSourceToken());
    const rows: Array<{ steps: unknown }> = await ds.query('SELECT steps FROM zmodu_agent_runs WHERE id = ANY ($1)', [posted]);
    expect(rows).toHaveLength(2);
    const [recall] = (await http().get(`/agents/runs/${posted[1]}`).set('Authorization', alice).expect(200)).body.steps.flatMap(
      (s: { toolCalls: ToolCall[] }) => s.toolCalls,
    );
    expect(recall).toMatchObject({ name: 'memory.recall', decision: 'allowed', ok: true });
    expect(JSON.parse(recall.observation)).toEqual({
      chars: expect.any(Number),
      digest: true,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // The stored tool calls (arguments and observations) hold the note nowhere; the goal, the steps' text and the answer
    // are the user's and the model's own words, kept as written.
    const storedCalls = rows.flatMap((row) => (row.steps as Array<{ toolCalls: unknown[] }>).flatMap((step) => step.toolCalls));
    expect(storedCalls.map((c) => (c as ToolCall).name)).toEqual(['memory.remember', 'memory.recall']);
    expect(JSON.stringify(storedCalls)).not.toContain('Hypothetical Bank');
  });

  it('memory.remember needs memory:write in the token: without it the call is refused and nothing is stored', async () => {
    const app = await boot();
    const permissions = ALL_PERMISSIONS.filter((p) => p !== PERMISSIONS.memoryWrite);
    const carol = bearer('t1', 'carol', permissions);
    const refused = await run(app, 'trader', carol, 'Remember: call me Caz');
    // The guard allows the name (the trader's allow list); the dispatcher's permission check refuses the caller.
    expect(calls(refused)[0]).toMatchObject({ name: 'memory.remember', cause: 'missing_permission', outcome: 'forbidden' });
    expect(observed(calls(refused)[0])).toMatchObject({ error: 'PermissionDenied', permission: PERMISSIONS.memoryWrite });
    expect(refused.answer).toMatch(/^I could not remember that/);
    expect((await request(app.getHttpServer()).get('/memory').set('Authorization', carol).expect(200)).body).toEqual([]);
  });

  it("schedule_job through the scheduler creates a job listed for its tenant only; another tenant's cancel_job fails, the owner's succeeds", async () => {
    const app = await boot();
    const t1 = bearer('t1', 'alice');
    const t2 = bearer('t2', 'mallory');

    const scheduled = await run(app, 'scheduler', t1, 'Schedule morning_summary at "45 7 * * 1-5" in Europe/London');
    const [schedule] = calls(scheduled);
    expect(schedule).toMatchObject({ name: 'schedule_job', decision: 'allowed' });
    const jobId = String(observed(schedule).jobId);
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);

    const listed = observed(calls(await run(app, 'scheduler', t1, 'List the jobs'))[0]) as unknown as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      expect.objectContaining({
        id: jobId,
        agent: 'analyst',
        goal: MORNING_SUMMARY_GOAL,
        cron: '45 7 * * 1-5',
        timeZone: 'Europe/London',
        createdBy: 'alice',
      }),
    ]);
    const theirs = observed(calls(await run(app, 'scheduler', t2, 'List the jobs'))[0]) as unknown as unknown[];
    expect(theirs).toEqual([]);
    // Over HTTP too: GET /jobs shows the tenant's jobs, with the permissions its runs will have: its task's (market:read),
    // not the creator's whole token (every permission of the sample), and when it expires.
    const jobs = await request(app.getHttpServer()).get('/jobs').set('Authorization', t1).expect(200);
    expect(jobs.body).toEqual([
      expect.objectContaining({ id: jobId, origin: 'dynamic', task: 'morning_summary', permissions: [PERMISSIONS.marketRead] }),
    ]);
    // The default lifetime, 90 days from when it was scheduled (its stored creation, written just after its expiry).
    const [job] = await app.get<DataSource>(getDataSourceToken()).query('SELECT created_at FROM zmodu_agent_jobs WHERE id = $1', [jobId]);
    const lifetime = Date.parse(jobs.body[0].expiresAt as string) - new Date(job.created_at).getTime();
    expect(lifetime).toBeLessThanOrEqual(90 * 86_400_000);
    expect(lifetime).toBeGreaterThan(89 * 86_400_000);

    const stolen = await run(app, 'scheduler', t2, `Cancel job ${jobId}`);
    expect(calls(stolen)[0]).toMatchObject({ name: 'cancel_job', decision: 'allowed' });
    expect(observed(calls(stolen)[0])).toMatchObject({ reason: 'not_found' });
    expect(stolen.answer).toMatch(/^That failed: not_found/);

    const cancelled = await run(app, 'scheduler', t1, `Cancel job ${jobId}`);
    expect(observed(calls(cancelled)[0])).toEqual({ cancelled: true });
    expect(cancelled.answer).toBe('The job is cancelled.');
    expect((await request(app.getHttpServer()).get('/jobs').set('Authorization', t1).expect(200)).body).toEqual([]);
  });

  it('the job skills need job:schedule / job:read in the token, and the trader (execute off) may not call them', async () => {
    const app = await boot();
    const reader = bearer('t1', 'rita', [PERMISSIONS.agentRun, PERMISSIONS.jobRead]);
    const refused = await run(app, 'scheduler', reader, 'Schedule morning_summary');
    expect(calls(refused)[0]).toMatchObject({ name: 'schedule_job', cause: 'missing_permission', outcome: 'forbidden' });
    expect(observed(calls(refused)[0])).toMatchObject({ permission: PERMISSIONS.jobSchedule });
    const listed = await run(app, 'scheduler', reader, 'List the jobs');
    expect(calls(listed)[0]).toMatchObject({ name: 'list_jobs', decision: 'allowed', outcome: 'ok' });
    const blind = await run(app, 'scheduler', bearer('t1', 'sam', [PERMISSIONS.agentRun]), 'List the jobs');
    expect(observed(calls(blind)[0])).toMatchObject({ permission: PERMISSIONS.jobRead });
    expect(
      (
        await request(app.getHttpServer())
          .get('/jobs')
          .set('Authorization', bearer('t1', 'sam', [PERMISSIONS.agentRun]))
      ).status,
    ).toBe(403);
    const trader = await request(app.getHttpServer()).get('/agents/trader/policy').set('Authorization', bearer('t1', 'alice')).expect(200);
    expect(trader.body.effectiveTools).not.toContain('schedule_job');
    expect(trader.body.classDeniedTools).toEqual([]);
  });

  it("the desk's @AgentJob is stored at boot for acme: weekday mornings in New York, as desk-bot, read-only", async () => {
    const app = await boot();
    const acme = await request(app.getHttpServer()).get('/jobs').set('Authorization', bearer('acme', 'alice')).expect(200);
    expect(acme.body).toContainEqual({
      id: 'static:acme-morning-summary',
      origin: 'static',
      agent: 'analyst',
      goal: MORNING_SUMMARY_GOAL,
      cron: '30 8 * * 1-5',
      timeZone: 'America/New_York',
      missed: 'skip',
      userId: 'desk-bot',
      permissions: DESK_JOB_PERMISSIONS,
      task: null,
      expiresAt: null, // a static job belongs to the code: it lives as long as its @AgentJob
      createdAt: expect.any(String),
      lastTickAt: null,
    });
    const globex = await request(app.getHttpServer()).get('/jobs').set('Authorization', bearer('globex', 'bob')).expect(200);
    expect(globex.body.map((j: { id: string }) => j.id)).not.toContain('static:acme-morning-summary');
  });
});
