import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { auditPolicy, Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import type { Cache } from 'cache-manager';
import request from 'supertest';
import { ADMIN_AGENT_SKILLS } from '../apps/sample/src/agents';
import { PERMISSIONS } from '../apps/sample/src/auth/auth.constants';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { SAMPLE_MCP_POLICY } from '../apps/sample/src/mcp.policy';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const bearer = (tenant: string, user: string, permissions: string[]) => `Bearer ${mintToken(SECRET, { tenant, user, permissions })}`;
const ADMIN = [PERMISSIONS.agentRun, PERMISSIONS.agentRead, PERMISSIONS.adminConfig, PERMISSIONS.adminCache];

interface ToolCall {
  name: string;
  decision: string;
  cause: string | null;
  observation: string;
}

describe('sample app: the admin skills, the admin agent and the config endpoints', () => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);

  it("the admin agent reads a config key of the caller's tenant; PUT /admin/config/:key changes it for that tenant only", async () => {
    const app = await boot();
    const http = () => request(app.getHttpServer());
    const runAdmin = async (auth: string) => {
      const res = await http().post('/agents/admin/runs').set('Authorization', auth).send({ goal: 'What is the draft limit?' }).expect(200);
      return res.body as { answer: string; steps: Array<{ toolCalls: ToolCall[] }> };
    };
    const t1 = bearer('t1', 'ada', ADMIN);
    expect((await runAdmin(t1)).answer).toBe('The draft limit is 1000 (version 0).');

    const listed = await http().get('/admin/config').set('Authorization', t1).expect(200);
    expect(listed.body.keys.map((k: { key: string }) => k.key)).toEqual(['desk.banner', 'desk.currency', 'orders.maxDraftQuantity']);
    const put = await http()
      .put('/admin/config/orders.maxDraftQuantity')
      .set('Authorization', t1)
      .send({ value: 2500, expectedVersion: 0 })
      .expect(200);
    expect(put.body).toMatchObject({ value: 2500, version: 1, previous: null, updatedBy: 'ada' });
    await http().put('/admin/config/orders.maxDraftQuantity').set('Authorization', t1).send({ value: 1, expectedVersion: 0 }).expect(409);
    await http().put('/admin/config/desk.currency').set('Authorization', t1).send({ value: 'EUR' }).expect(403);
    await http().put('/admin/config/orders.maxDraftQuantity').set('Authorization', t1).send({ value: 'lots' }).expect(400);
    await http().put('/admin/config/desk.unknown').set('Authorization', t1).send({ value: 1 }).expect(404);

    expect((await runAdmin(t1)).answer).toBe('The draft limit is 2500 (version 1).');
    expect((await runAdmin(bearer('t2', 'bo', ADMIN))).answer).toBe('The draft limit is 1000 (version 0).');
  });

  it('refuses the admin skills and endpoints without the admin permission codes', async () => {
    const app = await boot();
    const plain = bearer('t1', 'pat', [PERMISSIONS.agentRun]);
    await request(app.getHttpServer()).get('/admin/config').set('Authorization', plain).expect(403);
    await request(app.getHttpServer()).put('/admin/config/desk.banner').set('Authorization', plain).send({ value: 'hi' }).expect(403);
    const run = await request(app.getHttpServer())
      .post('/agents/admin/runs')
      .set('Authorization', plain)
      .send({ goal: 'limit?' })
      .expect(200);
    const [call] = (run.body.steps as Array<{ toolCalls: ToolCall[] }>).flatMap((s) => s.toolCalls);
    expect(call).toMatchObject({ name: 'admin.config.get', decision: 'allowed', cause: 'missing_permission' });
    expect(run.body.answer).toMatch(/Could not read the draft limit: missing_permission/);
  });

  it('only the admin agent names admin skills; no other agent or the MCP policy can reach one', async () => {
    const app = await boot();
    const auth = bearer('t1', 'ada', ADMIN);
    const admin = await request(app.getHttpServer()).get('/agents/admin/policy').set('Authorization', auth).expect(200);
    expect(admin.body).toMatchObject({ adminByFilter: [], unknownTools: [], hasClassBlindSpot: false });
    expect(admin.body.effectiveTools).toEqual([...ADMIN_AGENT_SKILLS].sort());
    for (const name of ['trader', 'analyst', 'desk', 'ops', 'scheduler']) {
      const policy = await request(app.getHttpServer()).get(`/agents/${name}/policy`).set('Authorization', auth).expect(200);
      expect(policy.body.adminByFilter).toEqual([]);
      expect((policy.body.effectiveTools as string[]).filter((t) => t.startsWith('admin.'))).toEqual([]);
    }
    const mcp = auditPolicy(app.get(SkillRegistry), SAMPLE_MCP_POLICY);
    expect(mcp.adminByFilter).toEqual([]);
    expect(mcp.effectiveTools.filter((t) => t.startsWith('admin.'))).toEqual([]);
  });

  it("admin.cache.invalidate drops the caller tenant's key of the app's cache-manager cache, not another tenant's", async () => {
    const app = await boot();
    const cache = app.get<Cache>(CACHE_MANAGER);
    await cache.set('t1:quote:ACME', 101.5);
    await cache.set('t2:quote:ACME', 99);
    const ctx = createSkillContext({
      guard: new Guard({ allow: ['admin.cache.invalidate'], allowExecute: true }),
      tenantId: 't1',
      userId: 'ada',
      permissions: ADMIN,
    });
    const done = await app.get(SkillDispatcher).dispatch(ctx, 'admin.cache.invalidate', { cache: 'quotes', keys: ['quote:ACME'] });
    expect(done).toMatchObject({ ok: true, value: { cache: 'quotes', invalidated: 1 } });
    expect(await cache.get('t1:quote:ACME')).toBeUndefined();
    expect(await cache.get('t2:quote:ACME')).toBe(99);
    const wild = await app.get(SkillDispatcher).dispatch(ctx, 'admin.cache.invalidate', { cache: 'quotes', keys: ['quote:*'] });
    expect(wild.error).toMatchObject({ reason: 'cache_key_wildcard' });
  });
});
