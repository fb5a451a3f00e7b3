import { Test } from '@nestjs/testing';
import { GuardModule } from '@zmodu/guard';
import { SkillRegistry, SkillsModule } from '@zmodu/skills';
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
    await expect(boot(MemoryModule.forRoot({}))).rejects.toThrow(/needs the app's TypeORM DataSource: import TypeOrmModule.forRoot/);
  });

  it('caps that cannot work fail boot', async () => {
    await expect(boot(MemoryModule.forRoot({ store: new InMemoryMemoryStore(), maxChars: -1 }))).rejects.toThrow(/maxChars must be/);
  });
});
