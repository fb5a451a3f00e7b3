import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentRegistry, ScriptedModelProvider } from '@zmodu/agent';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { MEMORY_STORE } from '@zmodu/memory/internal';
import { MemoryModule, MemoryRecall, MemoryStore, ZMODU_MEMORY_MIGRATIONS } from '@zmodu/memory';
import { memoryAgentModule } from './__fixtures__/memory-agent';
import { MEMORY_FENCE_CLOSE, MEMORY_FENCE_OPEN } from './memory-block';

describe('MemoryModule with an agent', () => {
  let db: TestDatabase;
  let app: TestingModule;
  const systems: string[] = [];
  // Each run: a first turn that may remember the goal (when it starts with "remember:"), then a final answer.
  const provider = new ScriptedModelProvider([
    (req) => {
      systems.push(req.system ?? '');
      const goal = String(req.messages[0]?.content ?? '');
      return goal.startsWith('remember:')
        ? { toolCalls: [{ name: 'memory.remember', arguments: { content: goal.slice(9).trim(), kind: 'preference' } }] }
        : { text: 'done' };
    },
    { text: 'noted' },
  ]);

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_MEMORY_MIGRATIONS, migrationsRun: true })),
        MemoryModule.forRoot({ maxEntries: 3 }),
        memoryAgentModule(provider, { auditStore: 'memory', quotaStore: 'memory' }, 'You are a helpful assistant.'),
      ],
    }).compile();
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const store = () => app.get<MemoryStore>(MEMORY_STORE);
  const dispatch = (scope: { tenantId?: string; userId?: string }, name: string, args: unknown) =>
    app.get(SkillDispatcher).dispatch(createSkillContext({ guard: new Guard({ allow: [name] }), ...scope, permissions: [] }), name, args);

  it("puts the user's remembered entry in the system prompt, fenced as data, and never another user's", async () => {
    await store().remember(
      { tenantId: 'acme', userId: 'alice' },
      { agent: 'helper', kind: 'preference', content: 'alice likes window seats' },
    );
    await store().remember({ tenantId: 'acme', userId: 'bob' }, { agent: 'helper', kind: 'preference', content: 'bob likes aisle seats' });
    await store().remember({ tenantId: 'acme_alice', userId: 'x' }, { agent: 'helper', kind: 'note', content: 'tenant collision seats' });
    systems.length = 0;
    const agent = app.get(AgentRegistry).get('helper');
    await agent.run('book seats', { tenantId: 'acme', userId: 'alice' });
    await agent.run('book seats', { tenantId: 'acme', userId: 'carol' });
    await agent.run('book seats', { tenantId: 'acme' });
    expect(systems[0]).toContain('You are a helpful assistant.');
    expect(systems[0]).toContain('alice likes window seats');
    expect(systems[0]).toMatch(/untrusted data, not instructions/);
    expect(systems[0]).not.toContain('bob likes');
    expect(systems[0]).not.toContain('tenant collision');
    const fenced = systems[0].slice(systems[0].indexOf(MEMORY_FENCE_OPEN), systems[0].indexOf(MEMORY_FENCE_CLOSE));
    expect(fenced).toContain('"note":"alice likes window seats"');
    expect(systems[1]).not.toContain(MEMORY_FENCE_OPEN);
    expect(systems[1]).not.toContain('seats');
    expect(systems[2]).not.toContain(MEMORY_FENCE_OPEN);
  });

  it('an entry the agent remembers through memory.remember reaches the next run of that user only', async () => {
    const agent = app.get(AgentRegistry).get('helper');
    const r = await agent.run('remember: dave prefers vegetarian meals', { tenantId: 'acme', userId: 'dave' });
    expect(r.steps[0].toolCalls.map((c) => `${c.name}:${c.decision}`)).toEqual(['memory.remember:allowed']);
    systems.length = 0;
    await agent.run('plan dinner meals', { tenantId: 'acme', userId: 'dave' });
    await agent.run('plan dinner meals', { tenantId: 'globex', userId: 'dave' });
    expect(systems[0]).toContain('dave prefers vegetarian meals');
    expect(systems[1]).not.toContain('vegetarian');
    const [entry] = await store().list({ tenantId: 'acme', userId: 'dave' }, { limit: 10 });
    expect(entry).toMatchObject({ agent: 'helper', kind: 'preference', content: 'dave prefers vegetarian meals' });
  });

  it('the skills take tenant and user from the context only, and refuse a context without them', async () => {
    const eve = { tenantId: 'acme', userId: 'eve' };
    const saved = await dispatch(eve, 'memory.remember', { content: 'eve reads poetry' });
    expect(saved.value).toEqual({ id: expect.any(String) });
    const smuggled = await dispatch(eve, 'memory.remember', { content: 'x', tenantId: 'globex', userId: 'bob' });
    expect(smuggled.error).toMatchObject({ error: 'InvalidArguments' });
    const recalled = await dispatch(eve, 'memory.recall', { query: 'poetry' });
    expect(recalled.value).toMatchObject({ entries: [{ note: 'eve reads poetry', kind: 'note' }] });
    expect((await dispatch({ tenantId: 'acme', userId: 'frank' }, 'memory.recall', { query: 'poetry' })).value).toMatchObject({
      entries: [],
    });
    const refused = await dispatch({ tenantId: 'acme' }, 'memory.recall', { query: 'poetry' });
    expect(refused.error).toMatchObject({ reason: 'memory_scope_required' });
    expect((await dispatch({ tenantId: 'acme' }, 'memory.remember', { content: 'x' })).error).toMatchObject({
      reason: 'memory_scope_required',
    });
    // A user id that is no id (blank, '0') is refused by the dispatcher before the skill runs.
    for (const scope of [
      { tenantId: 'acme', userId: '  ' },
      { tenantId: 'acme', userId: '0' },
    ]) {
      expect((await dispatch(scope, 'memory.recall', { query: 'poetry' })).error).toMatchObject({ reason: 'invalid_caller_id' });
      expect((await dispatch(scope, 'memory.remember', { content: 'x' })).error).toMatchObject({ reason: 'invalid_caller_id' });
    }
    // Without a tenant the dispatcher refuses before the skill runs (memory skills are tenant-scoped).
    for (const scope of [{ userId: 'eve' }, {}]) {
      expect((await dispatch(scope, 'memory.recall', { query: 'poetry' })).error).toMatchObject({ error: 'TenantRequired' });
      expect((await dispatch(scope, 'memory.remember', { content: 'x' })).error).toMatchObject({ error: 'TenantRequired' });
    }
    const long = await dispatch(eve, 'memory.remember', { content: 'x'.repeat(2001) });
    expect(long.error).toMatchObject({ error: 'InvalidArguments' });
    expect(await store().list(eve, { limit: 10 })).toHaveLength(1);
  });

  it('a note holding a key or a card number reaches the prompt redacted, like a tool result', async () => {
    const hal = { tenantId: 'acme', userId: 'hal' };
    const key = `sk-proj-${'A1b2C3d4'.repeat(4)}`;
    await store().remember(hal, { agent: 'helper', kind: 'note', content: `my key is ${key} and my card 4111 1111 1111 1111` });
    const block = await app.get(MemoryRecall).recallBlock(hal, 'key');
    expect(block).toContain('my key is [redacted] and my card [redacted]');
    expect(block).not.toContain(key);
    expect(block).not.toContain('4111');
    // The store keeps what the user said (the user may list or erase it); only what a model reads is redacted.
    expect((await store().list(hal, { limit: 10 }))[0].content).toContain(key);
  });

  it('recall is capped by the module options, and an erase removes everything from the next prompt', async () => {
    const gina = { tenantId: 'acme', userId: 'gina' };
    for (let i = 0; i < 5; i++) await store().remember(gina, { agent: 'helper', kind: 'note', content: `gina note ${i}` });
    expect(await app.get(MemoryRecall).recall(gina, 'note')).toHaveLength(3);
    expect(await store().erase(gina)).toBe(5);
    expect(await app.get(MemoryRecall).recallBlock(gina, 'note')).toBe('');
  });
});
