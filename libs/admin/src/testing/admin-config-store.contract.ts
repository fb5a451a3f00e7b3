import assert from 'node:assert/strict';
import type { AdminConfigStore } from '../config/admin-config.store';
import { ConfigVersionConflictException } from '../config/exceptions/config-version-conflict.exception';
import { InvalidConfigWriteException } from '../config/exceptions/invalid-config-write.exception';

/** What a store factory gives the contract. */
export interface AdminConfigStoreHarness {
  store: AdminConfigStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

type Body = () => void | Promise<void>;
/** The test runner's functions (jest's or vitest's globals), found when the suite is declared, not when it is imported. */
interface Runner {
  describe(name: string, body: () => void): void;
  it(name: string, body: Body, timeout?: number): void;
  beforeEach(body: Body): void;
  afterEach(body: Body): void;
}

/**
 * The shared cases every AdminConfigStore must pass, in a describe() named `name` (jest or vitest globals; assertions
 * with node:assert). The factory returns a fresh, empty store. Covers versions, previous values, expected versions,
 * tenant isolation (tenants named `constructor` and `__proto__` too), JSON values, bad calls, and concurrent writers
 * of one key with one expected version (exactly one lands).
 */
export function adminConfigStoreContract(name: string, factory: () => Promise<AdminConfigStoreHarness>): void {
  const { describe, it, beforeEach, afterEach } = globalThis as unknown as Runner;
  describe(name, () => {
    let h: AdminConfigStoreHarness;
    let store: AdminConfigStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.close?.();
    });

    it('writes a first value at version 1, then counts versions up and returns the entry before each write', async () => {
      assert.equal(await store.get('acme', 'orders.maxDraft'), undefined);
      const first = await store.set('acme', 'orders.maxDraft', 5, { updatedBy: 'alice' });
      assert.equal(first.previous, undefined);
      assert.deepEqual(
        { ...first.entry, updatedAt: undefined },
        { key: 'orders.maxDraft', value: 5, version: 1, updatedAt: undefined, updatedBy: 'alice' },
      );
      assert.ok(first.entry.updatedAt instanceof Date && !Number.isNaN(first.entry.updatedAt.getTime()));
      const second = await store.set('acme', 'orders.maxDraft', 7);
      assert.equal(second.previous?.value, 5);
      assert.equal(second.previous?.version, 1);
      assert.equal(second.previous?.updatedBy, 'alice');
      assert.equal(second.entry.version, 2);
      assert.equal(second.entry.updatedBy, null);
      const read = await store.get('acme', 'orders.maxDraft');
      assert.equal(read?.value, 7);
      assert.equal(read?.version, 2);
    });

    it('keeps JSON values of every kind, and a caller changing what it got changes nothing stored', async () => {
      const values: unknown[] = [
        'text with "quotes" and ünïcödé',
        0,
        -1.5,
        true,
        false,
        null,
        [1, 'a', { b: [] }],
        { nested: { list: [1, 2] } },
      ];
      for (const [i, value] of values.entries()) {
        await store.set('acme', `k${i}`, value);
        assert.deepEqual((await store.get('acme', `k${i}`))?.value, value);
      }
      const got = await store.get('acme', 'k7');
      (got?.value as { nested: { list: number[] } }).nested.list.push(3);
      assert.deepEqual((await store.get('acme', 'k7'))?.value, { nested: { list: [1, 2] } });
    });

    it('writes only on the expected version (0: no value yet), and a stale one changes nothing', async () => {
      await assert.rejects(store.set('acme', 'a', 1, { expectedVersion: 1 }), (e: unknown) => {
        assert.ok(e instanceof ConfigVersionConflictException);
        assert.equal(e.currentVersion, 0);
        assert.equal(e.expectedVersion, 1);
        return true;
      });
      assert.equal(await store.get('acme', 'a'), undefined);
      assert.equal((await store.set('acme', 'a', 1, { expectedVersion: 0 })).entry.version, 1);
      await assert.rejects(store.set('acme', 'a', 2, { expectedVersion: 0 }), ConfigVersionConflictException);
      assert.equal((await store.set('acme', 'a', 2, { expectedVersion: 1 })).entry.version, 2);
      await assert.rejects(store.set('acme', 'a', 3, { expectedVersion: 1 }), (e: unknown) => {
        assert.ok(e instanceof ConfigVersionConflictException);
        assert.equal(e.currentVersion, 2);
        return true;
      });
      const read = await store.get('acme', 'a');
      assert.equal(read?.value, 2);
      assert.equal(read?.version, 2);
    });

    it("keeps each tenant's values apart, also for tenants named like Object.prototype's properties", async () => {
      const tenants = ['acme', 'globex', 'constructor', '__proto__', 'toString', 'hasOwnProperty'];
      for (const [i, tenant] of tenants.entries()) await store.set(tenant, 'shared.key', i);
      for (const [i, tenant] of tenants.entries()) {
        const read = await store.get(tenant, 'shared.key');
        assert.equal(read?.value, i, tenant);
        assert.equal(read?.version, 1, tenant);
      }
      assert.equal(await store.get('initech', 'shared.key'), undefined);
      assert.deepEqual(await store.list('initech', ['shared.key']), []);
      await store.set('acme', 'only.acme', 'x');
      assert.equal(await store.get('globex', 'only.acme'), undefined);
      assert.equal((await store.set('globex', 'only.acme', 'y', { expectedVersion: 0 })).previous, undefined);
    });

    it('lists the stored entries of the keys asked for, in the tenant only', async () => {
      await store.set('acme', 'a', 1);
      await store.set('acme', 'b', 2);
      await store.set('globex', 'c', 3);
      const listed = (await store.list('acme', ['a', 'b', 'c', 'missing', 'a'])).map((e) => [e.key, e.value]).sort();
      assert.deepEqual(listed, [
        ['a', 1],
        ['b', 2],
      ]);
      assert.deepEqual(await store.list('acme', []), []);
    });

    it('refuses calls that name no tenant, a bad key or version, or a value that is not JSON, and writes nothing', async () => {
      for (const tenant of ['', '   ', undefined, null, 42]) {
        await assert.rejects(store.set(tenant as string, 'a', 1), InvalidConfigWriteException);
        await assert.rejects(store.get(tenant as string, 'a'), InvalidConfigWriteException);
        await assert.rejects(store.list(tenant as string, ['a']), InvalidConfigWriteException);
      }
      for (const key of ['', 'a b', '*', 'a..b', 'x'.repeat(129), 7])
        await assert.rejects(store.set('acme', key as string, 1), InvalidConfigWriteException);
      for (const expectedVersion of [-1, 1.5, Number.NaN, '1'])
        await assert.rejects(store.set('acme', 'a', 1, { expectedVersion: expectedVersion as number }), InvalidConfigWriteException);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const value of [undefined, cyclic, () => 1, 10n, 'a\u0000b', ['\ud800'], { ['\udc00']: 1 }])
        await assert.rejects(store.set('acme', 'a', value), InvalidConfigWriteException);
      assert.equal(await store.get('acme', 'a'), undefined);
    });

    it('lets exactly one of 8 concurrent writers with the same expected version land; the others see a conflict', async () => {
      await store.set('acme', 'hot', 0);
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.set('acme', 'hot', i + 1, { expectedVersion: 1, updatedBy: `w${i}` })),
      );
      const landed = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r) => r.status === 'rejected');
      assert.equal(landed.length, 1);
      assert.equal(refused.length, 7);
      for (const r of refused) assert.ok((r as PromiseRejectedResult).reason instanceof ConfigVersionConflictException);
      const winner = (landed[0] as PromiseFulfilledResult<Awaited<ReturnType<AdminConfigStore['set']>>>).value;
      assert.equal(winner.previous?.value, 0);
      const read = await store.get('acme', 'hot');
      assert.equal(read?.version, 2);
      assert.equal(read?.value, winner.entry.value);
    });

    it('counts every one of 8 concurrent unconditional writers (first values too): no write is lost', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.set('acme', 'fresh', i)));
      assert.deepEqual(
        results.map((r) => r.entry.version).sort((a, b) => a - b),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
      // Each write saw the one before it: the previous versions are 0 (none) to 7, each once.
      assert.deepEqual(
        results.map((r) => r.previous?.version ?? 0).sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7],
      );
      assert.equal((await store.get('acme', 'fresh'))?.version, 8);
    });
  });
}
