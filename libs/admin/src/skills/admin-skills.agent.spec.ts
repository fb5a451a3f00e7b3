import { Test } from '@nestjs/testing';
import { AgentModule, AgentRegistry, AgentSpec, ScriptedModelProvider } from '@zmodu/agent';
import { InMemoryAdminConfigStore } from '../config/in-memory-admin-config.store';
import { AdminSkillsModule } from './admin-skills.module';
import { DEFAULT_ADMIN_SKILL_PERMISSIONS } from './admin-skills.options';

const ALL_ADMIN = [
  'admin.cache.clear',
  'admin.cache.invalidate',
  'admin.config.get',
  'admin.config.set',
  'admin.tenant.provision',
  'admin.user.manage',
];

async function boot(agents: AgentSpec[], strictPolicies = false) {
  const app = await Test.createTestingModule({
    imports: [
      AdminSkillsModule.forRoot({
        store: new InMemoryAdminConfigStore(),
        config: { keys: { 'orders.maxDraft': { type: 'integer', mutable: true, default: 5 } } },
        audit: false,
      }),
      AgentModule.forRoot({ agents, strictPolicies, guard: { auditStore: 'memory', quotaStore: 'memory' } }),
    ],
  }).compile();
  await app.init();
  return app;
}

describe('admin skills and agents: reachable only when the allow list names them', () => {
  it('an ops agent calls the admin skills its allow list names, and is refused the others', async () => {
    const provider = new ScriptedModelProvider([
      {
        toolCalls: [
          { name: 'admin.config.set', arguments: { key: 'orders.maxDraft', value: 7, expectedVersion: 0 } },
          { name: 'admin.cache.clear', arguments: { cache: 'sessions', all: true } },
        ],
      },
      { text: 'done' },
    ]);
    const app = await boot([
      {
        name: 'ops',
        provider,
        skills: ['admin.config.get', 'admin.config.set', 'admin.cache.clear'],
        guard: { allow: ['admin.config.get', 'admin.config.set'], allowExecute: true },
      },
    ]);
    try {
      const agent = app.get(AgentRegistry).get('ops');
      expect(agent.auditPolicy()).toMatchObject({ adminByFilter: [], unknownTools: [] });
      const run = await agent.run('raise the draft limit', {
        tenantId: 'acme',
        userId: 'ops1',
        permissions: Object.values(DEFAULT_ADMIN_SKILL_PERMISSIONS),
      });
      expect(run.steps[0].toolCalls.map((c) => [c.name, c.decision, c.cause])).toEqual([
        ['admin.config.set', 'allowed', null],
        ['admin.cache.clear', 'denied', 'denied_not_listed'],
      ]);
    } finally {
      await app.close();
    }
  });

  it('flags an agent whose skills filter or allow-list pattern would include admin skills, and strictPolicies refuses to boot', async () => {
    const provider = new ScriptedModelProvider([{ text: 'ok' }]);
    const app = await boot([
      { name: 'everything', provider, skills: () => true, guard: { allow: ['admin.config.get'] } },
      { name: 'patterned', provider, skills: ['admin.config.get'], guard: { allow: ['admin.cache.*'], allowExecute: true } },
    ]);
    try {
      const everything = app.get(AgentRegistry).get('everything').auditPolicy();
      expect(everything.adminByFilter).toEqual(ALL_ADMIN.filter((n) => n !== 'admin.config.get'));
      expect(app.get(AgentRegistry).get('patterned').auditPolicy().adminByFilter).toEqual(['admin.cache.clear', 'admin.cache.invalidate']);
    } finally {
      await app.close();
    }
    await expect(
      boot([{ name: 'everything', provider, skills: () => true, guard: { allow: ['admin.config.get'] } }], true),
    ).rejects.toThrow(/admin skills included by a filter, not by name.*admin\.cache\.clear/);
  });
});
