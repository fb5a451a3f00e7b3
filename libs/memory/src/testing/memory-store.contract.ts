import { InvalidMemoryEntryException } from '../exceptions/invalid-memory-entry.exception';
import { InvalidMemoryQueryException } from '../exceptions/invalid-memory-query.exception';
import { InvalidMemoryScopeException } from '../exceptions/invalid-memory-scope.exception';
import { MemoryErasedException } from '../exceptions/memory-erased.exception';
import { MemoryFullException } from '../exceptions/memory-full.exception';
import type { MemoryStore } from '../memory.store';
import type { MemoryScope, MemoryStoreOptions, NewMemoryEntry } from '../memory.types';

/** What a store factory gives the contract. */
export interface MemoryStoreHarness {
  store: MemoryStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

const ALICE: MemoryScope = { tenantId: 'acme', userId: 'alice' };
const BOB: MemoryScope = { tenantId: 'acme', userId: 'bob' };
const OTHER_TENANT: MemoryScope = { tenantId: 'globex', userId: 'alice' };
const CAPS = { maxEntries: 8, maxChars: 2000 };
const PAGE = { limit: 100 };
/** Scopes that are no scope at all: each finds nothing, deletes nothing, and cannot be written. */
const NOT_SCOPES: unknown[] = [
  undefined,
  null,
  {},
  { tenantId: 'acme' },
  { userId: 'alice' },
  { tenantId: '', userId: 'alice' },
  { tenantId: 'acme', userId: '' },
  { tenantId: '   ', userId: 'alice' },
  { tenantId: 'acme', userId: '\t\n' },
  { tenantId: '0', userId: 'alice' },
  { tenantId: 'acme', userId: '0' },
  { tenantId: 0, userId: 'alice' },
  { tenantId: 'acme', userId: 0 },
  { tenantId: ['acme'], userId: 'alice' },
];

const note = (content: string, over: Partial<NewMemoryEntry> = {}): NewMemoryEntry => ({ agent: 'trader', kind: 'note', content, ...over });

/**
 * The shared cases every MemoryStore must pass, in a describe() named `name`. The factory returns
 * a fresh, empty store built with `options` (a `maxNotesPerUser` the cap cases set; `{}`: the default).
 * Includes scope isolation (by id too), invalid scopes, relevance and caps, expiry, erase against
 * writes started before it (deterministic and concurrent), and the per-user cap under 40 writers at once.
 */
export function memoryStoreContract(name: string, factory: (options: MemoryStoreOptions) => Promise<MemoryStoreHarness>): void {
  describe(name, () => {
    let h: MemoryStoreHarness;
    let store: MemoryStore;
    beforeEach(async () => {
      h = await factory({});
      store = h.store;
    });
    /** A store with a cap of `max` notes per user, in place of the default one (closed with it). */
    const capped = async (max: number) => {
      await h.close?.();
      h = await factory({ maxNotesPerUser: max });
      store = h.store;
      return store;
    };
    afterEach(async () => {
      await h.close?.();
    });

    const contents = async (scope: MemoryScope) => (await store.list(scope, PAGE)).map((e) => e.content);

    it('remembers an entry and lists it with its fields, newest first, a page at a time', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000);
      const first = await store.remember(ALICE, note('prefers limit orders', { kind: 'preference', expiresAt }));
      const second = await store.remember(ALICE, note('holds ACME'));
      const third = await store.remember(ALICE, note('trades mornings'));
      const all = await store.list(ALICE, PAGE);
      expect(all.map((e) => e.id)).toEqual([third, second, first]);
      expect(all[2]).toMatchObject({
        id: first,
        tenantId: 'acme',
        userId: 'alice',
        agent: 'trader',
        kind: 'preference',
        content: 'prefers limit orders',
      });
      expect(all[2].createdAt).toBeInstanceOf(Date);
      expect(all[2].expiresAt?.getTime()).toBe(expiresAt.getTime());
      expect(all[1].expiresAt).toBeNull();
      expect((await store.list(ALICE, { limit: 1, offset: 1 })).map((e) => e.id)).toEqual([second]);
    });

    it("never recalls, lists, forgets or erases another tenant's or another user's entries, even by id", async () => {
      const mine = await store.remember(ALICE, note('alice secret plan'));
      const bobs = await store.remember(BOB, note('bob secret plan'));
      const other = await store.remember(OTHER_TENANT, note('globex alice secret plan'));
      expect((await store.recall(ALICE, 'secret plan', CAPS)).map((e) => e.id)).toEqual([mine]);
      expect(await contents(BOB)).toEqual(['bob secret plan']);
      expect(await contents(OTHER_TENANT)).toEqual(['globex alice secret plan']);
      expect(await store.forget(ALICE, bobs)).toBe(false);
      expect(await store.forget(ALICE, other)).toBe(false);
      expect(await store.forget(BOB, mine)).toBe(false);
      expect(await store.erase(BOB)).toBe(1);
      expect(await contents(ALICE)).toEqual(['alice secret plan']);
      expect(await contents(OTHER_TENANT)).toEqual(['globex alice secret plan']);
      expect(await store.forget(ALICE, mine)).toBe(true);
      expect(await store.forget(ALICE, mine)).toBe(false);
      expect(await store.forget(ALICE, 'not-an-id')).toBe(false);
      expect(await contents(ALICE)).toEqual([]);
    });

    it('keeps apart scopes whose parts would collide if joined into one string', async () => {
      const a = { tenantId: 'team_a', userId: 'x' };
      const b = { tenantId: 'team', userId: 'a_x' };
      const c = { tenantId: 'team:a', userId: 'x' };
      const d = { tenantId: 'team', userId: 'a:x' };
      for (const s of [a, b, c, d]) await store.remember(s, note(`entry of ${s.tenantId}/${s.userId}`));
      for (const s of [a, b, c, d]) {
        expect(await contents(s)).toEqual([`entry of ${s.tenantId}/${s.userId}`]);
        expect((await store.recall(s, 'entry', CAPS)).map((e) => e.content)).toEqual([`entry of ${s.tenantId}/${s.userId}`]);
      }
      expect(await store.erase(a)).toBe(1);
      expect(await contents(b)).toHaveLength(1);
    });

    it("treats tenants and users named 'constructor', '__proto__' or 'toString' like any other", async () => {
      const scopes = [
        { tenantId: 'constructor', userId: '__proto__' },
        { tenantId: '__proto__', userId: 'constructor' },
        { tenantId: 'toString', userId: 'hasOwnProperty' },
      ];
      for (const s of scopes) await store.remember(s, note(`of ${s.tenantId}`));
      for (const s of scopes) expect(await contents(s)).toEqual([`of ${s.tenantId}`]);
      expect(await contents({ tenantId: 'constructor', userId: 'constructor' })).toEqual([]);
      expect(await store.erase(scopes[0])).toBe(1);
      expect(await contents(scopes[1])).toEqual(['of __proto__']);
    });

    it('a missing, empty, whitespace or zero tenant or user finds nothing, deletes nothing and cannot be written', async () => {
      const id = await store.remember(ALICE, note('kept'));
      for (const bad of NOT_SCOPES) {
        const s = bad as MemoryScope;
        expect(await store.recall(s, 'kept', CAPS)).toEqual([]);
        expect(await store.list(s, PAGE)).toEqual([]);
        expect(await store.forget(s, id)).toBe(false);
        expect(await store.erase(s)).toBe(0);
        await expect(store.remember(s, note('x'))).rejects.toThrow(InvalidMemoryScopeException);
        await expect(store.beginWrite(s)).rejects.toThrow(/needs a tenant and a user/);
      }
      expect(await contents(ALICE)).toEqual(['kept']);
    });

    it('refuses entries it cannot store and caps that are not positive integers, saying why', async () => {
      await expect(store.remember(ALICE, note('   '))).rejects.toThrow(InvalidMemoryEntryException);
      await expect(store.remember(ALICE, note('x'.repeat(2001)))).rejects.toThrow(/longer than 2000/);
      await expect(store.remember(ALICE, note('x', { kind: 'Not A Kind' }))).rejects.toThrow(/kind/);
      await expect(store.remember(ALICE, note('x', { agent: '' }))).rejects.toThrow(/agent/);
      await expect(store.remember(ALICE, note('x', { expiresAt: new Date('nope') }))).rejects.toThrow(/expiresAt/);
      // C1 controls (NEL, CSI) as a goal refuses them, and lone surrogates: never stored.
      for (const content of ['line\u0085break', 'ansi \u009b31m red', 'half \ud83d pair', '\u0000'])
        await expect(store.remember(ALICE, note(content))).rejects.toThrow(/control character|lone surrogate/);
      expect(await store.remember(ALICE, note('tab\tnewline\nemoji \ud83d\ude00 fine'))).toEqual(expect.any(String));
      expect(await store.erase(ALICE)).toBe(1);
      await expect(store.recall(ALICE, 'x', { maxEntries: 0, maxChars: 10 })).rejects.toThrow(InvalidMemoryQueryException);
      await expect(store.list(ALICE, { limit: 10, offset: -1 })).rejects.toThrow(/offset/);
      expect(await contents(ALICE)).toEqual([]);
    });

    it('recalls the entries matching the goal first, then the most recent, within the entry and character caps', async () => {
      await store.remember(ALICE, note('likes dividend stocks'));
      await store.remember(ALICE, note('old note about weather'));
      await store.remember(ALICE, note('newest unrelated note'));
      const got = await store.recall(ALICE, 'dividend', { maxEntries: 2, maxChars: 2000 });
      expect(got.map((e) => e.content)).toEqual(['likes dividend stocks', 'newest unrelated note']);
      // Any word of the goal matches; more of its words rank higher.
      await store.remember(ALICE, note('weather and dividend income both matter'));
      const anyWord = await store.recall(ALICE, 'plan my dividend income', { maxEntries: 2, maxChars: 2000 });
      expect(anyWord.map((e) => e.content)).toEqual(['weather and dividend income both matter', 'likes dividend stocks']);
      expect(await store.forget(ALICE, anyWord[0].id)).toBe(true);
      const none = await store.recall(ALICE, 'zebra', { maxEntries: 8, maxChars: 2000 });
      expect(none.map((e) => e.content)).toEqual(['newest unrelated note', 'old note about weather', 'likes dividend stocks']);
      const small = await store.recall(ALICE, 'dividend', { maxEntries: 8, maxChars: 25 });
      expect(small.map((e) => e.content)).toEqual(['likes dividend stocks']);
      expect(small.reduce((n, e) => n + e.content.length, 0)).toBeLessThanOrEqual(25);
      expect((await store.recall(ALICE, '', CAPS)).map((e) => e.content)).toEqual(none.map((e) => e.content));
      expect(await store.recall(ALICE, 'dividend & | !( )<->:* "', CAPS)).toHaveLength(3);
    });

    it('never recalls nor lists an expired entry', async () => {
      await store.remember(ALICE, note('expired dividend', { expiresAt: new Date(Date.now() - 1000) }));
      await store.remember(ALICE, note('current dividend', { expiresAt: new Date(Date.now() + 60_000) }));
      expect((await store.recall(ALICE, 'dividend', CAPS)).map((e) => e.content)).toEqual(['current dividend']);
      expect(await contents(ALICE)).toEqual(['current dividend']);
    });

    it('erase deletes all of the scope and refuses a write that started before it', async () => {
      await store.remember(ALICE, note('one'));
      await store.remember(ALICE, note('two'));
      const token = await store.beginWrite(ALICE);
      expect(await store.erase(ALICE)).toBe(2);
      await expect(store.remember(ALICE, note('resurrected'), token)).rejects.toThrow(MemoryErasedException);
      expect(await contents(ALICE)).toEqual([]);
      expect(await store.recall(ALICE, 'resurrected', CAPS)).toEqual([]);
      await expect(store.remember(ALICE, note('x'), await store.beginWrite(BOB))).rejects.toThrow(InvalidMemoryScopeException);
      // A write started after the erase lands.
      await store.remember(ALICE, note('after'), await store.beginWrite(ALICE));
      expect(await contents(ALICE)).toEqual(['after']);
      expect(await store.erase(ALICE)).toBe(1);
      expect(await store.erase(ALICE)).toBe(0);
    });

    it('refuses a note past maxNotesPerUser (nothing evicted); another user, a forgotten or expired note leave room', async () => {
      const s = await capped(3);
      const ids = [await s.remember(ALICE, note('one')), await s.remember(ALICE, note('two')), await s.remember(ALICE, note('three'))];
      await expect(s.remember(ALICE, note('four'))).rejects.toThrow(MemoryFullException);
      await expect(s.remember(ALICE, note('four'))).rejects.toThrow(/holds 3 notes, the most it keeps/);
      expect(await contents(ALICE)).toEqual(['three', 'two', 'one']);
      await s.remember(BOB, note('bob has room'));
      await s.remember(OTHER_TENANT, note('so has alice of globex'));
      expect(await s.forget(ALICE, ids[0])).toBe(true);
      await s.remember(ALICE, note('soon gone', { expiresAt: new Date(Date.now() + 150) }));
      await expect(s.remember(ALICE, note('five'))).rejects.toThrow(MemoryFullException);
      await new Promise((r) => setTimeout(r, 200));
      await s.remember(ALICE, note('five')); // the expired note does not count
      expect(await contents(ALICE)).toEqual(['five', 'three', 'two']);
    });

    it('lets 10 of 40 writers at once under a cap of 10 store a note (attack: count, then insert)', async () => {
      const s = await capped(10);
      const settled = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => s.remember(ALICE, note(`note ${i}`))));
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      for (const r of settled) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(MemoryFullException);
      expect(await s.list(ALICE, PAGE)).toHaveLength(10);
    });

    it('with many writes in flight and one erase, nothing started before the erase is left after it', async () => {
      await store.remember(BOB, note('bob stays'));
      const tokens = await Promise.all(Array.from({ length: 20 }, () => store.beginWrite(ALICE)));
      // Half the writes are issued before the erase and half after it, all in flight at once.
      const write = (i: number) => store.remember(ALICE, note(`write ${i}`), tokens[i]);
      const before = Array.from({ length: 10 }, (_, i) => write(i));
      const erased = store.erase(ALICE);
      const after = Array.from({ length: 10 }, (_, i) => write(10 + i));
      const settled = await Promise.allSettled([...before, ...after]);
      const count = await erased;
      for (const s of settled) if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(MemoryErasedException);
      expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(count);
      expect(await contents(ALICE)).toEqual([]);
      expect(await contents(BOB)).toEqual(['bob stays']);
    });
  });
}
