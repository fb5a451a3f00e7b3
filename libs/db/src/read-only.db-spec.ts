import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { embeddedTemplate, openTestDataSource, TestDatabase } from './testing/test-database';
import { EmbeddedDatabase, openEmbeddedDatabase as open } from './embedded-database';
import { runReadOnlyStatement } from './read-only';

/**
 * The read-only executor on both databases (PGlite by default, PostgreSQL with
 * ZMODU_TEST_DATABASE_URL): one statement over the extended protocol, always rolled back,
 * under a deadline that holds on the embedded database too.
 */
describe('runReadOnlyStatement', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, ds, close } = await openTestDataSource());
    await ds.query('CREATE TABLE accounts (id int PRIMARY KEY, tenant text NOT NULL, balance int NOT NULL)');
    await ds.query("INSERT INTO accounts VALUES (1, 'a', 100), (2, 'b', 200)");
  });

  afterAll(async () => {
    await close?.();
  });

  const balances = async () => JSON.stringify(await ds.query('SELECT id, tenant, balance FROM accounts ORDER BY id'));
  /** Statements of other sessions running now on a server whose text is LIKE `pattern`. */
  const activeLike = async (pattern: string) =>
    Number(
      (
        await ds.query(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1",
          [pattern],
        )
      )[0].n,
    );

  async function run(
    text: string,
    values: unknown[] = [],
    extra: { timeoutMs?: number; role?: string; settings?: Record<string, string> } = {},
  ) {
    const runner = ds.createQueryRunner();
    try {
      const conn = await runner.connect();
      return await runReadOnlyStatement(conn, {
        text,
        values,
        timeoutMs: extra.timeoutMs ?? 2000,
        role: extra.role,
        settings: extra.settings,
      });
    } finally {
      await runner.release();
    }
  }

  const failure = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: { code?: string; message?: string }) => e,
    );

  it('returns the rows and the column names, even of an empty result', async () => {
    expect(await run('SELECT id, balance FROM accounts WHERE tenant = $1', ['a'])).toEqual({
      rows: [{ id: 1, balance: 100 }],
      fields: ['id', 'balance'],
    });
    expect(await run('SELECT id, balance FROM accounts WHERE tenant = $1', ['none'])).toEqual({ rows: [], fields: ['id', 'balance'] });
  });

  it.each([
    ['SELECT 1;COMMIT;UPDATE accounts SET balance = 0'],
    ["SELECT 1; COMMIT; UPDATE accounts SET balance = 0 WHERE tenant = 'b'"],
    ['COMMIT; SELECT pg_sleep(15)'],
    ['SELECT 1; DROP TABLE accounts'],
  ])('a second statement cannot ride along: %s fails and changes nothing', async (text) => {
    const before = await balances();
    const err = await failure(run(text));
    expect(err).not.toBeNull();
    // Refused when the text is parsed, before any of it runs: nothing slept, committed or dropped.
    expect(err!.code).toBe('42601'); // cannot insert multiple commands into a prepared statement
    expect(await balances()).toBe(before);
    if (db.kind === 'postgres') expect(await activeLike('%pg_sleep(15)%')).toBe(0);
  });

  it('is read only and always rolled back', async () => {
    const before = await balances();
    expect((await failure(run('UPDATE accounts SET balance = 0')))!.code).toBe('25006');
    expect((await failure(run('WITH x AS (UPDATE accounts SET balance = 0 RETURNING 1) SELECT * FROM x')))!.code).toBe('25006');
    expect(await balances()).toBe(before);
  });

  it('applies the settings and the role for the statement only, and leaves the connection clean after an error', async () => {
    await ds.query('DROP ROLE IF EXISTS zmodu_test_reader');
    await ds.query('CREATE ROLE zmodu_test_reader NOLOGIN');
    try {
      const r = await run(
        "SELECT current_setting('zmodu.test', true) AS s, current_user AS u, current_setting('transaction_read_only') AS ro",
        [],
        {
          role: 'zmodu_test_reader',
          settings: { 'zmodu.test': 'x' },
        },
      );
      expect(r.rows).toEqual([{ s: 'x', u: 'zmodu_test_reader', ro: 'on' }]);
      // The role has no grant on the table: the fence of the database refuses.
      expect((await failure(run('SELECT * FROM accounts', [], { role: 'zmodu_test_reader' })))!.code).toBe('42501');
      // Whatever failed, the next user of the session is outside any transaction, as itself, with no setting left.
      const after = await ds.query(
        "SELECT current_user AS u, current_setting('zmodu.test', true) AS s, current_setting('transaction_read_only') AS ro",
      );
      expect(after[0].u).not.toBe('zmodu_test_reader');
      expect(after[0].s === null || after[0].s === '').toBe(true);
      expect(after[0].ro).toBe('off');
      await ds.query("UPDATE accounts SET balance = balance WHERE tenant = 'a'"); // writable again
    } finally {
      await ds.query('DROP ROLE IF EXISTS zmodu_test_reader');
    }
  });

  it('keeps working on one connection through failures at every step (its own statements are parsed once and re-parsed after a failure)', async () => {
    const runner = ds.createQueryRunner();
    try {
      const conn = await runner.connect();
      const ok = () =>
        runReadOnlyStatement(conn, { text: 'SELECT count(*)::int AS n FROM accounts WHERE tenant = $1', values: ['a'], timeoutMs: 2000 });
      const fails = (extra: { text?: string; role?: string }) =>
        runReadOnlyStatement(conn, { text: extra.text ?? 'SELECT 1', values: [], timeoutMs: 2000, role: extra.role }).then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        );
      for (let i = 0; i < 3; i++) {
        expect((await ok()).rows).toEqual([{ n: 1 }]);
        expect(await fails({ role: 'no_such_role_anywhere' })).toBe('22023'); // fails in the settings step
        expect((await ok()).rows).toEqual([{ n: 1 }]);
        expect(await fails({ text: 'SELECT * FROM nowhere' })).toBe('42P01'); // fails in the statement
        expect(await fails({ text: 'SELECT (' })).toBe('42601'); // fails to parse
      }
      expect((await ok()).rows).toEqual([{ n: 1 }]);
    } finally {
      await runner.release();
    }
  });

  it('stops a statement at its deadline and answers timeout, before the statement could end by itself', async () => {
    const before = await balances();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    // pg_sleep(20) ends without an error when it is left to finish: 57014 with the timeout's message is the deadline's.
    const err = await failure(run('SELECT pg_sleep(20)', [], { timeoutMs: 400 }));
    const ticked = ticks;
    clearInterval(timer);
    expect(err!.code).toBe('57014');
    expect(err!.message).toMatch(/statement timeout/);
    // The event loop was free while it ran (on the embedded database the statement runs in a worker thread): a 20 ms
    // timer fired again and again before the answer, which a statement holding the loop for 400 ms would not let happen.
    expect(ticked).toBeGreaterThanOrEqual(3);
    // Everything committed before is there, and the database serves again.
    expect(await balances()).toBe(before);
    expect((await run('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 2 }]);
  });

  it('a statement the server cannot interrupt (nested C functions over 50 MB) still ends in timeout for the caller, and the pool serves on', async () => {
    let expr = 'lpad($1, $2, $3)';
    for (let i = 0; i < 10; i++) expr = `upper(${expr})`;
    const err = await failure(run(`SELECT length(${expr}) AS n`, ['a', 50_000_000, 'x'], { timeoutMs: 500 }));
    expect(err!.code).toBe('57014');
    // Answered by the caller's own deadline (past the server's grace the connection is closed), not by the statement's
    // end: on a server, the embedded database's restart otherwise.
    expect(err!.message).toMatch(
      db.kind === 'postgres'
        ? /did not stop within \d+ ms of its statement timeout; the connection was closed/
        : /embedded database was restarted/,
    );
    expect((await run('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 2 }]);
    expect(await ds.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    if (db.kind === 'postgres') {
      // The backend itself runs on until it next checks for interrupts; wait for it, so the database can be dropped.
      for (let i = 0; i < 300; i++) {
        const [{ n }] = await ds.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT length(upper%'",
        );
        if (n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  it('a statement leaves no session state on its pooled connection (attack: a session advisory lock taken in the statement survives the rollback)', async () => {
    const role = `${db.name}_state_reader`;
    await ds.query(`DROP ROLE IF EXISTS ${role}`);
    await ds.query(`CREATE ROLE ${role} NOLOGIN`);
    const runner = ds.createQueryRunner();
    try {
      const conn = await runner.connect();
      const [{ path }] = await runner.query("SELECT current_setting('search_path') AS path");
      const hostile = [
        'SELECT pg_advisory_lock(77)',
        'SELECT pg_advisory_lock_shared(78), pg_try_advisory_lock(79, 1)',
        // Taken, then the statement fails: the cleanup path releases it too.
        'SELECT pg_advisory_lock(80), 1 / (pg_backend_pid() - pg_backend_pid())',
        // Session-level settings, a prepared statement, LISTEN, a cursor WITH HOLD and a temporary table, through SQL run by a function.
        "SELECT set_config('search_path', 'nowhere', false), set_config('zmodu.left', 'x', false)",
        "SELECT query_to_xml('PREPARE zmodu_left AS SELECT 1', true, false, '')",
        "SELECT query_to_xml('LISTEN zmodu_left', true, false, '')",
        "SELECT query_to_xml('DECLARE zmodu_left CURSOR WITH HOLD FOR SELECT 1', true, false, '')",
        "SELECT query_to_xml('CREATE TEMP TABLE zmodu_left (x int)', true, false, '')",
      ];
      for (const text of hostile)
        await runReadOnlyStatement(conn, { text, values: [], timeoutMs: 2000, role, releaseSessionLocks: true }).catch(() => undefined);
      const [state] = await runner.query(
        // (The embedded database's one session shows no pid in pg_locks.)
        `SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND (pid = pg_backend_pid() OR pid IS NULL)) AS locks,
                (SELECT count(*)::int FROM pg_prepared_statements WHERE name = 'zmodu_left') AS prepared,
                (SELECT count(*)::int FROM pg_listening_channels() c) AS listening,
                (SELECT count(*)::int FROM pg_cursors) AS cursors,
                to_regclass('pg_temp.zmodu_left') IS NOT NULL AS temp,
                current_setting('search_path') AS path, coalesce(current_setting('zmodu.left', true), '') AS left_setting`,
      );
      expect(state).toEqual({ locks: 0, prepared: 0, listening: 0, cursors: 0, temp: false, path, left_setting: '' });
    } finally {
      await runner.release();
      await ds.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('a caller that gives up has its statement cancelled on the server, not only abandoned (attack: the backend works on after timeout)', async () => {
    const controller = new AbortController();
    const runner = ds.createQueryRunner();
    try {
      const conn = await runner.connect();
      if (db.kind === 'postgres') {
        const pending = failure(
          runReadOnlyStatement(conn, { text: 'SELECT pg_sleep(30)', values: [], timeoutMs: 20_000, signal: controller.signal }),
        );
        const sleeping = async () =>
          Number(
            (
              await ds.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query = 'SELECT pg_sleep(30)'",
              )
            )[0].n,
          );
        for (let i = 0; i < 100 && (await sleeping()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(await sleeping()).toBe(1);
        controller.abort();
        // Answered by the abort (its own message), not by the deadline 20 s away: the caller did not wait for it.
        expect(await pending).toMatchObject({ code: '57014', message: expect.stringMatching(/its caller gave up/) });
        // The server stopped it (a closed socket alone would have left it sleeping for 30 s).
        for (let i = 0; i < 100 && (await sleeping()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(await sleeping()).toBe(0);
      } else {
        // The embedded database: a statement whose caller left before it started does not start (one running runs to its
        // deadline: stopping it restarts the database, which costs every caller more).
        controller.abort();
        expect(
          await failure(
            runReadOnlyStatement(conn, { text: 'SELECT pg_sleep(30)', values: [], timeoutMs: 20_000, signal: controller.signal }),
          ),
        ).toMatchObject({ code: '57014', message: expect.stringMatching(/its caller gave up before it started/) });
      }
    } finally {
      await runner.release();
    }
    expect((await run('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 2 }]);
  });

  it('a share of slots is settled in the database: of six statements at once with two slots, two run and four are refused (many callers)', async () => {
    const slot = { key: `zmodu:test:${Date.now()}`, limit: 2 };
    const attempt = async (key: string) => {
      const runner = ds.createQueryRunner();
      try {
        const conn = await runner.connect();
        return await runReadOnlyStatement(conn, {
          text: 'SELECT pg_sleep(1.5) IS NULL AS slept',
          values: [],
          timeoutMs: 10_000,
          slot: { ...slot, key },
        }).then(
          () => 'ran',
          (e: { name?: string; code?: string }) => e.name ?? e.code,
        );
      } finally {
        await runner.release();
      }
    };
    const outcomes = await Promise.all([...Array.from({ length: 6 }, () => attempt(slot.key)), attempt(`${slot.key}:other`)]);
    if (db.kind === 'postgres') {
      expect(outcomes.slice(0, 6).sort()).toEqual([
        'SlotsTakenError',
        'SlotsTakenError',
        'SlotsTakenError',
        'SlotsTakenError',
        'ran',
        'ran',
      ]);
      expect(outcomes[6]).toBe('ran'); // another share is not held by this one
    } else expect(outcomes).toEqual(Array(7).fill('ran')); // one session, one statement at a time: the share is kept in the process
    // Once they ended, the slots are free again.
    expect(await attempt(slot.key)).toBe('ran');
  });

  it('a long statement without any injection ends in timeout too (md5 of a huge lpad over a self-join)', async () => {
    // Left to run, it would take hours: only the deadline ends it (jest's test timeout is the hang guard).
    const err = await failure(
      run('SELECT count(md5(lpad(a.tenant, $1))) FROM accounts a, accounts b, generate_series(1, 1000) g', [100_000_000], {
        timeoutMs: 500,
      }),
    );
    expect(err!.code).toBe('57014');
    // The embedded database is stopped at the deadline; a server stops it itself (between rows) or its connection is closed.
    expect(err!.message).toMatch(
      db.kind === 'pglite' ? /embedded database was restarted/ : /statement timeout|did not stop within \d+ ms of its statement timeout/,
    );
    expect((await run('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 2 }]);
  });
});

describe('EmbeddedDatabase (PGlite in a worker thread)', () => {
  let db: EmbeddedDatabase;
  const openEmbeddedDatabase = async () => open({ loadDataDir: await embeddedTemplate() });

  afterEach(async () => {
    await db?.close();
  });

  it('starts with PostgreSQL planner defaults (PGlite turns enable_seqscan off)', async () => {
    db = await openEmbeddedDatabase();
    expect((await db.query("SELECT current_setting('enable_seqscan') AS v")).rows).toEqual([{ v: 'on' }]);
  });

  it('keeps committed data across a restart forced by a deadline, and counts the restart', async () => {
    db = await openEmbeddedDatabase();
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (1), (2), (3)');
    const err = await db.readOnly({ text: 'SELECT pg_sleep(30)', values: [], timeoutMs: 200 }).then(
      () => null,
      (e: { code?: string }) => e,
    );
    expect(err?.code).toBe('57014');
    expect(db.restarts).toBe(1);
    expect((await db.query('SELECT sum(n)::int AS s FROM kept')).rows).toEqual([{ s: 6 }]);
    await db.query('INSERT INTO kept VALUES ($1)', [4]);
    expect((await db.query('SELECT count(*)::int AS c FROM kept')).rows).toEqual([{ c: 4 }]);
  });

  it('answers a request made while it reopens, after it reopens', async () => {
    db = await openEmbeddedDatabase();
    const slow = db.readOnly({ text: 'SELECT pg_sleep(30)', values: [], timeoutMs: 150 }).catch((e: { code?: string }) => e.code);
    await new Promise((r) => setTimeout(r, 200));
    const next = await db.query('SELECT 41 + 1 AS n');
    expect(await slow).toBe('57014');
    expect(next.rows).toEqual([{ n: 42 }]);
  });

  it('without a folder, keeps its data in a temporary one that close() removes', async () => {
    db = await openEmbeddedDatabase();
    const dir = (db as unknown as { dataDir: string }).dataDir;
    expect(existsSync(dir)).toBe(true);
    await db.close();
    expect(existsSync(dir)).toBe(false);
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });

  it('survives its worker dying on its own (a WASM abort): what it held fails clearly, the next request reopens it', async () => {
    db = await openEmbeddedDatabase();
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    const worker = (db as unknown as { worker: { terminate(): Promise<number> } }).worker;
    const held = db.readOnly({ text: 'SELECT pg_sleep(5)', values: [], timeoutMs: 10_000 }).then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    await worker.terminate(); // as if it crashed
    const err = await held;
    expect(err?.code).toBe('57P01');
    expect(err?.message).toMatch(/stopped; it is reopened on the next request/);
    expect((await db.query('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
    expect(db.restarts).toBe(1);
  });

  // PGlite 0.5 does not trap on these: it lost the statement's error and answered an empty result (or a shorter list of
  // results, or 26000), and its session answered wrongly after it (SELECT 1 gave no rows). Each must be an error, never
  // rows, and the database must be reopened sound.
  const DEEP_SQL_RECURSION = 'SELECT depth(20000) AS v';
  const DEEP_PLPGSQL_RECURSION = 'SELECT pl_depth(20000) AS v';
  const LONG_UNION = Array(30_000).fill('SELECT 1').join(' UNION ALL ');
  const outOfStack: Array<[string, (db: EmbeddedDatabase) => Promise<unknown>]> = [
    ['a deep recursion of SQL functions (query)', (d) => d.query(DEEP_SQL_RECURSION)],
    ['a deep recursion of PL/pgSQL functions (query)', (d) => d.query(DEEP_PLPGSQL_RECURSION)],
    ['a very long UNION (query)', (d) => d.query(LONG_UNION)],
    ['a script whose second statement recurses deeply (exec)', (d) => d.exec(`SELECT 1; ${DEEP_SQL_RECURSION}; SELECT 2`)],
    ['a deep recursion in a read-only statement', (d) => d.readOnly({ text: DEEP_PLPGSQL_RECURSION, values: [], timeoutMs: 30_000 })],
  ];
  it.each(outOfStack)('%s that runs PGlite out of stack gets 54001, and the database is reopened sound', async (_name, run) => {
    db = await openEmbeddedDatabase();
    await db.exec(
      `CREATE TABLE kept (n int); INSERT INTO kept VALUES (9);
       CREATE FUNCTION depth(n int) RETURNS int LANGUAGE sql AS 'SELECT CASE WHEN n = 0 THEN 0 ELSE depth(n - 1) + 1 END';
       CREATE FUNCTION pl_depth(n int) RETURNS int LANGUAGE plpgsql AS 'BEGIN IF n = 0 THEN RETURN 0; END IF; RETURN pl_depth(n - 1) + 1; END'`,
    );
    const err = await run(db).then(
      (result) => ({ result }),
      (e: { code?: string; message: string }) => e,
    );
    expect(err).toMatchObject({ code: '54001' });
    expect((err as { message: string }).message).toMatch(/ran out of stack or memory .* simplify the statement/);
    expect(await db.query('SELECT 1 AS one')).toMatchObject({ rows: [{ one: 1 }] });
    expect((await db.query('SELECT n FROM kept')).rows).toEqual([{ n: 9 }]);
    expect((await db.query('SELECT depth(100) AS v')).rows).toEqual([{ v: 100 }]);
    expect(db.restarts).toBe(1);
  });

  it('a blank statement (whitespace, comments, semicolons) is answered with no rows, as PostgreSQL does, without a restart', async () => {
    db = await openEmbeddedDatabase();
    for (const blank of ['', '  ', '-- nothing', '/* nothing */ ;', '; ;'])
      expect(await db.query(blank)).toMatchObject({ rows: [], fields: [] });
    expect(await db.exec('/* nothing */')).toMatchObject([{ rows: [], fields: [] }]);
    expect((await db.exec('SELECT 1 AS a; -- trailing\n SELECT 2 AS b;')).map((r) => r.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
    expect(db.restarts).toBe(0);
  });

  it('close() while it reopens leaves no worker behind (and removes its temporary folder)', async () => {
    db = await openEmbeddedDatabase();
    const dir = (db as unknown as { dataDir: string }).dataDir;
    await db.readOnly({ text: 'SELECT pg_sleep(30)', values: [], timeoutMs: 150 }).catch(() => undefined);
    expect((db as unknown as { starting?: Promise<void> }).starting).toBeDefined(); // reopening now
    await db.close();
    await new Promise((r) => setTimeout(r, 3000)); // longer than a reopen takes
    expect((db as unknown as { worker?: unknown }).worker).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });

  it('a deadline longer than a Node timer holds is a long deadline, not an instant timeout', async () => {
    db = await openEmbeddedDatabase();
    expect((await db.readOnly({ text: 'SELECT 1 AS one', values: [], timeoutMs: 2 ** 40 })).rows).toEqual([{ one: 1 }]);
    expect(db.restarts).toBe(0);
  });

  it('reports a database error with its SQLSTATE and keeps serving', async () => {
    db = await openEmbeddedDatabase();
    await expect(db.query('SELECT * FROM nowhere')).rejects.toMatchObject({ code: '42P01' });
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
