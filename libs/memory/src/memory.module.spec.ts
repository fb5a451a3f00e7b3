import { Test } from '@nestjs/testing';
import { DataSourceMissingException, Guard, GuardModule } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry, SkillsModule } from '@zmodu/skills';
import { InvalidMemoryOptionsException } from './exceptions/invalid-memory-options.exception';
import { InMemoryMemoryStore } from './in-memory-memory.store';
import { MEMORY_STORE } from './memory.constants';
import { MemoryModule } from './memory.module';
import { MemoryModuleAsyncOptions } from './memory.module-definition';
import { MemoryRecall } from './memory-recall';

async function boot(memory: ReturnType<typeof MemoryModule.forRoot>) {
  const app = await Test.createTestingModule({
    imports: [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot(), memory],
  }).compile();
  await app.init();
  return app;
}

describe('MemoryModule', () => {
  it('forRootAsync takes the store and caps from a factory and registers the two skills', async () => {
    const store = new InMemoryMemoryStore();
    const async: MemoryModuleAsyncOptions = { useFactory: async () => ({ store, maxEntries: 2 }) };
    const app = await boot(MemoryModule.forRootAsync(async));
    expect(app.get(MEMORY_STORE)).toBe(store);
    const registry = app.get(SkillRegistry);
    expect(registry.get('memory.remember')).toMatchObject({ action: 'propose', source: 'MemoryModule' });
    expect(registry.get('memory.recall')).toMatchObject({ action: 'read', source: 'MemoryModule' });
    const scope = { tenantId: 't', userId: 'u' };
    for (let i = 0; i < 4; i++) await store.remember(scope, { agent: 'a', kind: 'note', content: `n${i}` });
    expect(await app.get(MemoryRecall).recall(scope, '')).toHaveLength(2);
    expect(await app.get(MemoryRecall).recall(scope, '', 50)).toHaveLength(2);
    await app.close();
  });

  it('skills: false leaves the skills out', async () => {
    const app = await boot(MemoryModule.forRoot({ store: new InMemoryMemoryStore(), skills: false }));
    expect(app.get(SkillRegistry).has('memory.remember')).toBe(false);
    await app.close();
  });

  it('the default store without a TypeORM DataSource fails boot, saying what to import', async () => {
    const booting = boot(MemoryModule.forRoot({}));
    await expect(booting).rejects.toThrow(DataSourceMissingException);
    await expect(booting).rejects.toThrow(/MemoryModule\.forRoot\(\{ store \}\) is 'typeorm'.*import TypeOrmModule\.forRoot/);
  });

  it('memory.remember past the per-user cap is refused as memory_full, saying what to do; nothing is evicted', async () => {
    const store = new InMemoryMemoryStore({ maxNotesPerUser: 1 });
    const app = await boot(MemoryModule.forRoot({ store }));
    const ctx = createSkillContext({ guard: new Guard({ allow: ['memory.remember'] }), tenantId: 't', userId: 'u', permissions: [] });
    expect(await app.get(SkillDispatcher).dispatch(ctx, 'memory.remember', { content: 'first' })).toMatchObject({ ok: true });
    const full = await app.get(SkillDispatcher).dispatch(ctx, 'memory.remember', { content: 'second' });
    expect(full).toMatchObject({ ok: false, outcome: 'error', error: { reason: 'memory_full', maxNotesPerUser: 1 } });
    expect(full.error?.message).toMatch(/holds 1 note, the most it keeps: nothing was remembered\. Forget notes first/);
    expect((await store.list({ tenantId: 't', userId: 'u' }, { limit: 10 })).map((e) => e.content)).toEqual(['first']);
    await app.close();
  });

  it('caps that cannot work fail boot', async () => {
    await expect(boot(MemoryModule.forRoot({ store: new InMemoryMemoryStore(), maxChars: -1 }))).rejects.toThrow(/maxChars must be/);
  });

  describe('permissions', () => {
    const alice = { tenantId: 'acme', userId: 'alice' };
    const dispatch = (app: Awaited<ReturnType<typeof boot>>, permissions: string[], name: string, args: unknown) =>
      app.get(SkillDispatcher).dispatch(createSkillContext({ guard: new Guard({ allow: [name] }), ...alice, permissions }), name, args);

    it('a caller without the code set for memory.remember is refused with PermissionDenied and nothing is stored', async () => {
      const store = new InMemoryMemoryStore();
      const app = await boot(MemoryModule.forRoot({ store, permissions: { remember: 'memory:write', recall: 'memory:read' } }));
      expect(app.get(SkillRegistry).get('memory.remember')).toMatchObject({ requiredPermission: 'memory:write' });
      expect(app.get(SkillRegistry).get('memory.recall')).toMatchObject({ requiredPermission: 'memory:read' });

      const refused = await dispatch(app, ['memory:read'], 'memory.remember', { content: 'alice likes tea' });
      expect(refused).toMatchObject({ ok: false, cause: 'missing_permission', outcome: 'forbidden' });
      expect(refused.error).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'memory:write' });
      expect(await store.list(alice, { limit: 10 })).toEqual([]);
      const unread = await dispatch(app, ['memory:write'], 'memory.recall', { query: 'tea' });
      expect(unread.error).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'memory:read' });

      const saved = await dispatch(app, ['memory:write'], 'memory.remember', { content: 'alice likes tea' });
      expect(saved).toMatchObject({ ok: true, value: { id: expect.any(String) } });
      expect(await store.list(alice, { limit: 10 })).toMatchObject([{ content: 'alice likes tea' }]);
      const recalled = await dispatch(app, ['memory:read'], 'memory.recall', { query: 'tea' });
      expect(recalled.value).toMatchObject({ entries: [{ note: 'alice likes tea' }] });
      await app.close();
    });

    it('forRootAsync takes them from its factory; a key left out, or no option, requires nothing', async () => {
      const store = new InMemoryMemoryStore();
      const app = await boot(MemoryModule.forRootAsync({ useFactory: () => ({ store, permissions: { remember: 'memory:write' } }) }));
      expect(app.get(SkillRegistry).get('memory.remember')?.requiredPermission).toBe('memory:write');
      expect(app.get(SkillRegistry).get('memory.recall')?.requiredPermission).toBeUndefined();
      expect((await dispatch(app, [], 'memory.remember', { content: 'x' })).error).toMatchObject({ error: 'PermissionDenied' });
      expect(await store.list(alice, { limit: 10 })).toEqual([]);
      expect((await dispatch(app, [], 'memory.recall', {})).ok).toBe(true);
      await app.close();
      const plain = await boot(MemoryModule.forRoot({ store }));
      expect(plain.get(SkillRegistry).get('memory.remember')?.requiredPermission).toBeUndefined();
      expect((await dispatch(plain, [], 'memory.remember', { content: 'x' })).ok).toBe(true);
      await plain.close();
    });

    it('reads own keys only: a code on the prototype fails boot (never dropped silently, leaving the skill open)', async () => {
      const inherited = Object.create({ remember: 'memory:write' }) as { remember?: string };
      await expect(boot(MemoryModule.forRoot({ store: new InMemoryMemoryStore(), permissions: inherited }))).rejects.toThrow(
        /permissions\.remember: is inherited/,
      );
    });

    it('a bad code or an unknown key fails boot, naming the field (forRoot and forRootAsync)', async () => {
      const cases: [unknown, RegExp][] = [
        [{ remember: '' }, /permissions\.remember: expected a permission code/],
        [{ remember: '   ' }, /permissions\.remember: expected a permission code/],
        [{ recall: 5 }, /permissions\.recall: expected a permission code.*got number/],
        [{ recall: null }, /permissions\.recall: expected a permission code.*got null/],
        [{ remember: 'memory:\nwrite' }, /permissions\.remember: .*without control characters/],
        [{ remember: 'memory:write\u0000' }, /permissions\.remember: .*without control characters/],
        [{ remember: ' memory:write' }, /permissions\.remember: .*surrounding spaces/],
        [{ remember: 'm'.repeat(201) }, /permissions\.remember: .*at most 200/],
        [{ forget: 'memory:write' }, /permissions\.forget: no such skill here: the keys are remember, recall/],
        [{ constructor: 'memory:write' }, /permissions\.constructor: no such skill/],
        [JSON.parse('{"__proto__":"memory:write"}'), /permissions\.__proto__: no such skill/],
        [{ 'memory.remember': 'memory:write' }, /permissions\["memory\.remember"\]: no such skill/],
        ['memory:write', /permissions: expected an object/],
        [['memory:write'], /permissions: expected an object/],
      ];
      for (const [permissions, message] of cases) {
        for (const memory of [
          MemoryModule.forRoot({ store: new InMemoryMemoryStore(), permissions: permissions as never }),
          MemoryModule.forRootAsync({ useFactory: () => ({ store: new InMemoryMemoryStore(), permissions: permissions as never }) }),
        ]) {
          const err = await boot(memory).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(InvalidMemoryOptionsException);
          expect((err as Error).message).toMatch(message);
        }
      }
    });
  });
});
