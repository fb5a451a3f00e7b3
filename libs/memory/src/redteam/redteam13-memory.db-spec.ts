import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { InvalidMemoryEntryException } from '../exceptions/invalid-memory-entry.exception';
import { MemoryErasedException } from '../exceptions/memory-erased.exception';
import { InMemoryMemoryStore } from '../in-memory-memory.store';
import { ZMODU_MEMORY_MIGRATIONS } from '../memory.migration';
import { TypeOrmMemoryStore } from '../typeorm-memory.store';

const CAPS = { maxEntries: 10, maxChars: 10_000 };

describe('red team 13: memory', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let store: TypeOrmMemoryStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_MEMORY_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    store = new TypeOrmMemoryStore(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('RT-M1 NUL in content is a clear InvalidMemoryEntryException, not a driver error', async () => {
    const err = await store.remember({ tenantId: 't', userId: 'u' }, { agent: 'a', kind: 'note', content: 'a\u0000b' }).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidMemoryEntryException);
  });

  it('RT-M2 NUL in a read scope finds nothing (no driver error)', async () => {
    await expect(store.recall({ tenantId: 't\u0000', userId: 'u' }, 'x', CAPS)).resolves.toEqual([]);
    await expect(store.list({ tenantId: 't', userId: 'u\u0000' }, { limit: 5 })).resolves.toEqual([]);
    await expect(store.erase({ tenantId: 't\u0000', userId: 'u' })).resolves.toBe(0);
  });

  it('RT-M3 NUL in a recall goal does not throw', async () => {
    await expect(store.recall({ tenantId: 't', userId: 'u' }, 'tea\u0000coffee', CAPS)).resolves.toEqual(expect.any(Array));
  });

  it('RT-M4 hostile goals do not break the ranker SQL', async () => {
    const s = { tenantId: 'rank', userId: 'u' };
    await store.remember(s, { agent: 'a', kind: 'note', content: "o'neil likes tea & coffee | milk" });
    const goals = [
      "o'neil",
      "' & '",
      ' | ',
      '!tea',
      'tea:*',
      '(tea',
      'a\\',
      '\\\\',
      "''''",
      'https://x.y/a?b=c&d=e',
      'a.b@c.d',
      '& | ! ( ) : *',
      'tea & coffee',
      '\u00a0',
      '   ',
      'x'.repeat(3000),
      Array.from({ length: 4000 }, (_, i) => `w${i}`).join(' '),
    ];
    for (const g of goals) await expect(store.recall(s, g, CAPS)).resolves.toEqual(expect.any(Array));
  });

  it('RT-M5 tenants named constructor/__proto__ are ordinary, no collisions across tenant/user split', async () => {
    for (const st of [new InMemoryMemoryStore(), store]) {
      await st.remember({ tenantId: '__proto__', userId: 'constructor' }, { agent: 'a', kind: 'note', content: 'proto note' });
      expect(await st.list({ tenantId: 'constructor', userId: '__proto__' }, { limit: 5 })).toEqual([]);
      expect(await st.list({ tenantId: '__proto__', userId: 'constructor' }, { limit: 5 })).toHaveLength(1);
      await st.remember({ tenantId: 'a:b', userId: 'c' }, { agent: 'a', kind: 'note', content: 'split 1' });
      expect(await st.list({ tenantId: 'a', userId: 'b:c' }, { limit: 5 })).toEqual([]);
      expect(await st.list({ tenantId: 'a:b', userId: 'c ' }, { limit: 5 })).toEqual([]);
    }
  });

  it("RT-M6 '0', 0, ' 0 ', empty scopes read/delete nothing", async () => {
    for (const st of [new InMemoryMemoryStore(), store]) {
      for (const scope of [
        { tenantId: '0', userId: 'u' },
        { tenantId: 't', userId: ' 0 ' },
        { tenantId: 0, userId: 'u' },
        { tenantId: 't', userId: '' },
        { tenantId: 't' },
        null,
      ] as never[]) {
        expect(await st.recall(scope, '', CAPS)).toEqual([]);
        expect(await st.list(scope, { limit: 5 })).toEqual([]);
        expect(await st.erase(scope)).toBe(0);
        await expect(st.remember(scope, { agent: 'a', kind: 'note', content: 'x' })).rejects.toThrow();
      }
    }
  });

  it('RT-M7 erase is final under a race: writes started before it never land after it', async () => {
    const s = { tenantId: 'race', userId: 'u' };
    for (let round = 0; round < 5; round++) {
      const tokens = await Promise.all(Array.from({ length: 10 }, () => store.beginWrite(s)));
      const writes = tokens.map((t, i) =>
        store.remember(s, { agent: 'a', kind: 'note', content: `w${i}` }, t).then(
          () => 'ok',
          (e) => (e instanceof MemoryErasedException ? 'erased' : String(e)),
        ),
      );
      const erased = store.erase(s);
      const outcomes = await Promise.all(writes);
      await erased;
      expect(outcomes.every((o) => o === 'ok' || o === 'erased')).toBe(true);
      expect(await store.list(s, { limit: 50 })).toEqual([]);
    }
  });

  it('RT-M8 an erase of a user with no entries still binds: a write begun before it is refused', async () => {
    const st = new InMemoryMemoryStore();
    const s = { tenantId: 'never-seen', userId: 'u' };
    const token = await st.beginWrite(s);
    expect(await st.erase(s)).toBe(0);
    await expect(st.remember(s, { agent: 'a', kind: 'note', content: 'late' }, token)).rejects.toBeInstanceOf(MemoryErasedException);
    expect(await st.list(s, { limit: 10 })).toEqual([]);
  });
});
