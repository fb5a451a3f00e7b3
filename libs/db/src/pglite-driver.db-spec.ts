import { DataSource } from 'typeorm';
import { embeddedDataSourceOptions } from './database-options';
import { openEmbeddedDatabase } from './embedded-database';
import { createPgliteDriver } from './pglite-driver';

describe('PGlite driver for TypeORM', () => {
  let ds: DataSource;

  beforeAll(async () => {
    ds = new DataSource(embeddedDataSourceOptions(await openEmbeddedDatabase()));
    await ds.initialize();
    await ds.query('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)');
    await ds.query('INSERT INTO counter VALUES (1, 0)');
  });

  afterAll(async () => {
    await ds?.destroy();
  });

  it('serializes concurrent transactions on the single session (no lost update, no interleaving)', async () => {
    const bump = () =>
      ds.transaction(async (m) => {
        const [{ n }] = await m.query('SELECT n FROM counter WHERE id = 1');
        await new Promise((r) => setTimeout(r, 5));
        await m.query('UPDATE counter SET n = $1 WHERE id = 1', [n + 1]);
      });
    await Promise.all(Array.from({ length: 10 }, bump));
    const [{ n }] = await ds.query('SELECT n FROM counter WHERE id = 1');
    expect(n).toBe(10);
  });

  it('rolls back a failed transaction without touching the others', async () => {
    const failing = ds.transaction(async (m) => {
      await m.query('UPDATE counter SET n = 999 WHERE id = 1');
      throw new Error('boom');
    });
    const ok = ds.transaction((m) => m.query('UPDATE counter SET n = n + 1 WHERE id = 1'));
    await expect(failing).rejects.toThrow('boom');
    await ok;
    const [{ n }] = await ds.query('SELECT n FROM counter WHERE id = 1');
    expect(n).toBe(11);
  });

  it('reports affected rows and int8/numeric as strings, as pg does', async () => {
    const [, affected] = await ds.query('UPDATE counter SET n = n WHERE id = $1', [1]);
    expect(affected).toBe(1);
    const [row] = await ds.query('SELECT 9007199254740993::int8 AS big, 1.50::numeric AS num');
    expect(row).toEqual({ big: '9007199254740993', num: '1.50' });
  });

  it('fails with a clear error instead of hanging when the session is held too long', async () => {
    const db = await openEmbeddedDatabase();
    const { Pool } = createPgliteDriver(db, { acquireTimeoutMs: 50 });
    const pool = new Pool() as unknown as {
      connect(): Promise<unknown>;
      query(sql: string): Promise<unknown>;
      end(): Promise<void>;
    };
    await pool.connect(); // held, never released
    await expect(pool.query('SELECT 1')).rejects.toThrow(/PGlite has one session/);
    await db.close();
  });

  it('hands a failed acquire to the callback only (as pg does), leaving no unhandled rejection: a down database stays a 503, not a crash', async () => {
    const db = await openEmbeddedDatabase();
    type CallbackPool = { connect(callback?: (err: Error | null) => void): Promise<unknown>; end(): Promise<void> };
    const busy = new (createPgliteDriver(db, { acquireTimeoutMs: 50, closeOnEnd: false }).Pool)() as unknown as CallbackPool;
    const gone = new (createPgliteDriver(db, { acquireTimeoutMs: 50, closeOnEnd: false }).Pool)() as unknown as CallbackPool;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await busy.connect(); // held, never released
      const timedOut = await new Promise<Error | null>((resolve) => void busy.connect((err) => resolve(err)));
      expect(timedOut?.message).toMatch(/Waited 50 ms for the embedded database session/);
      await gone.end();
      const ended = await new Promise<Error | null>((resolve) => void gone.connect((err) => resolve(err)));
      expect(ended?.message).toMatch(/PGlite pool has ended/);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await db.close();
    }
  });
});
