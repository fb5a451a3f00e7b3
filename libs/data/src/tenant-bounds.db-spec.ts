import { TAKE_SLOT_SQL } from '@zmodu/db/internal';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillCallResult, SkillDispatcher } from '@zmodu/skills';
import { ALPHA, BETA, ENTITIES } from './__fixtures__/business-fixture';
import { BusinessApp, startBusinessApp } from './__fixtures__/business-app';
import { BusinessSkills } from './business-skills';
import { EntitySpec } from './data-skills.options';

/** Minutes of work for one statement (120 lines per tenant, four times over): only its deadline ends it. */
const HEAVY = 'SELECT count(*) AS n FROM order_lines a, order_lines b, order_lines c, order_lines d';
/** The same shape, eight tables: the cartesian product. */
const EIGHT_WAY = 'SELECT count(*) AS n FROM orders a, orders b, orders c, orders d, orders e, orders f, orders g, orders h';
const TIMEOUT_MS = 1000;
const LIMIT = 2;

const WRITE_ENTITIES: EntitySpec[] = ENTITIES.map((e) => (e.name === 'order' ? { ...e, writable: ['status', 'note'] } : e));
const ALL_SKILLS = ['db.query', 'entity.lookup', 'entity.list', 'kpi.query', 'report.generate', 'entity.create', 'entity.update'];

/** Poll a condition with a bound (never an assertion on wall time). */
async function until(what: string, check: () => boolean | Promise<boolean>, boundMs = 20_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`waited ${boundMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('one tenant cannot hold the database (item: heavy queries of one tenant held everyone)', () => {
  let t: BusinessApp;
  let skills: BusinessSkills;
  /** The limit that holds here: the embedded database runs one statement at a time, so a tenant runs one. */
  let limit: number;
  const call = (skill: string, args: unknown, tenantId: string): Promise<SkillCallResult> =>
    t.app.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: ALL_SKILLS, allowExecute: true }),
        tenantId,
        userId: 'analyst',
        permissions: ['entity:write'],
      }),
      skill,
      args,
    );
  const outcome = (r: SkillCallResult) => (r.ok ? 'ok' : String(r.error?.reason));

  beforeAll(async () => {
    t = await startBusinessApp({
      entities: WRITE_ENTITIES,
      skills: ALL_SKILLS as never,
      limits: { timeoutMs: TIMEOUT_MS, maxConcurrentPerTenant: LIMIT },
    });
    skills = t.app.get(BusinessSkills);
    limit = t.db.kind === 'pglite' ? 1 : LIMIT;
  });

  afterAll(async () => {
    await t?.close();
  });

  /** Statements of other sessions still running on the server whose text is LIKE the pattern. */
  const stillRunning = async (like: string) =>
    Number(
      (
        await t.ds.query(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE $1",
          [like],
        )
      )[0].n,
    );

  const activeHeavy = async () =>
    Number(
      (
        await t.ds.query(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%order_lines%order_lines%'",
        )
      )[0].n,
    );

  it("another tenant's query does not wait behind twelve heavy queries of one tenant, more than the pool holds (attack: one tenant's heavy db.query calls)", async () => {
    expect(skills.slots.limit).toBe(limit);
    const ended: Array<{ who: string; outcome: string }> = [];
    let mostRunning = 0;
    const heavy = Array.from({ length: 12 }, () =>
      call('db.query', { sql: HEAVY }, ALPHA).then((r) => ended.push({ who: ALPHA, outcome: outcome(r) })),
    );
    await until('the first heavy statements to run', () => skills.slots.running(ALPHA) === limit);
    const sampling = setInterval(() => (mostRunning = Math.max(mostRunning, skills.slots.running(ALPHA))), 5);
    let beta: SkillCallResult;
    let onServer = 0;
    try {
      beta = await call('db.query', { sql: 'SELECT count(*) AS n FROM orders' }, BETA);
      ended.push({ who: BETA, outcome: outcome(beta) });
      if (t.db.kind === 'postgres') onServer = await activeHeavy();
    } finally {
      await Promise.all(heavy);
      clearInterval(sampling);
    }
    expect(onServer).toBeLessThanOrEqual(LIMIT);
    expect(beta.ok).toBe(true);
    // Beta waited behind none of alpha's statements on a server, and behind one at most on the embedded database's one
    // session (alpha's calls refused meanwhile ran nothing).
    const ranBeforeBeta = ended
      .slice(
        0,
        ended.findIndex((e) => e.who === BETA),
      )
      .filter((e) => e.outcome === 'timeout');
    expect(ranBeforeBeta.length).toBeLessThanOrEqual(t.db.kind === 'pglite' ? 1 : 0);
    expect(mostRunning).toBeLessThanOrEqual(limit);
    // Every heavy call ended within its deadline (timeout) or was refused after a bounded wait in alpha's own line.
    const alpha = ended.filter((e) => e.who === ALPHA).map((e) => e.outcome);
    expect(alpha).toHaveLength(12);
    expect(alpha.every((o) => o === 'timeout' || o === 'tenant_busy')).toBe(true);
    expect(alpha.filter((o) => o === 'timeout').length).toBeGreaterThanOrEqual(1);
    expect(alpha).toContain('tenant_busy');
    await until('alpha to hold no slot', () => skills.slots.running(ALPHA) === 0 && skills.slots.waiting(ALPHA) === 0);
  });

  it('an eight-way cartesian product past its deadline ends on the server within it: its backend no longer works afterwards', async () => {
    const r = await call('db.query', { sql: EIGHT_WAY }, ALPHA);
    expect(outcome(r)).toBe('timeout');
    if (t.db.kind === 'postgres') {
      const working = async () =>
        Number(
          (
            await t.ds.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%orders%orders%orders%orders%'",
            )
          )[0].n,
        );
      // statement_timeout ends it on the server; at most a bounded while passes before pg_stat_activity shows it.
      await until('the backend to stop', async () => (await working()) === 0, 5000);
      expect(await working()).toBe(0);
    } else expect(((await t.ds.query('SELECT 1 AS one')) as unknown[]).length).toBe(1); // the embedded database was stopped and reopened
  });

  it('a search of a long text for a long pattern fails at once, not in one call the server cannot stop (attack: LIKE of a 10,000-character pattern over a text replace() made 1,000,000 long)', async () => {
    // replace(10,000 a's, 'a', 100 a's) is 1,000,000 characters; LIKE, strpos and trim work with the product of the
    // two lengths inside one call: on PostgreSQL 15 this LIKE ran 47 s past a 2 s statement_timeout.
    const built = ['a'.repeat(10_000), 'a', 'a'.repeat(100)];
    const long = `%${'a'.repeat(9_998)}b`;
    const attacks: Array<[string, unknown[]]> = [
      ['SELECT replace(?, ?, ?) LIKE ? AS m', [...built, long]],
      ['SELECT strpos(replace(?, ?, ?), ?) AS p', [...built, `b${'a'.repeat(9_999)}`]],
      ['SELECT btrim(replace(?, ?, ?), ?) AS t', [...built, `${'b'.repeat(9_999)}a`]],
      // A text past the bound, whatever it is searched for: 2,000,000 characters.
      ['WITH w AS (SELECT replace(?, ?, ?) AS v) SELECT (w.v || w.v) LIKE ? AS m FROM w', [...built, '%b%']],
      ['WITH w AS (SELECT replace(?, ?, ?) AS v) SELECT split_part(w.v || w.v, ?, ?) AS s FROM w', [...built, 'b', 2]],
    ];
    for (const [sql, args] of attacks) {
      const r = await call('db.query', { sql, args }, ALPHA);
      expect([sql, outcome(r)]).toEqual([sql, 'value_too_large']);
      expect(r.error?.message).toMatch(/at most 1000000 characters, and what it looks for .* at most 100/);
    }
    if (t.db.kind === 'postgres') expect(await stillRunning('%pg_catalog"."replace%')).toBe(0);
    // A LIKE, strpos or replace of ordinary lengths runs as before, and LIKE ANY, whose patterns are not bounded, is refused.
    const ok = await call(
      'db.query',
      { sql: 'SELECT count(*) AS n FROM orders o WHERE o.note LIKE ? AND strpos(o.note, ?) > ?', args: ['%note 1%', 'alpha', 0] },
      ALPHA,
    );
    expect([outcome(ok), (ok.value as { rows: unknown[] }).rows]).toEqual(['ok', [{ n: '11' }]]);
    const many = await call(
      'db.query',
      { sql: 'SELECT count(*) AS n FROM orders o WHERE o.note LIKE ANY (?::text[])', args: [['%1%', '%2%']] },
      ALPHA,
    );
    expect(outcome(many)).toBe('operator_not_allowed');
  });

  it('a containment of two large values fails at once, not in one call the server cannot stop (attack: an array_agg or a jsonb_agg of tens of thousands of elements tested @> against itself)', async () => {
    // Distinct elements, each looked up along the whole other side: on PostgreSQL 15 each of these ran seconds past a
    // 1 s statement_timeout, in one call.
    const built = (containment: string) =>
      'WITH w AS (SELECT row_number() OVER () AS n FROM order_lines a, order_lines b, order_lines c LIMIT ?), ' +
      `v AS (SELECT array_agg(w.n) AS a, jsonb_agg(w.n) AS j FROM w) SELECT ${containment} AS m FROM v`;
    for (const [sql, args] of [
      [built('v.a @> v.a'), [70_000]],
      [built('v.j <@ v.j'), [25_000]],
    ] as Array<[string, unknown[]]>) {
      const r = await call('db.query', { sql, args }, ALPHA);
      expect([sql, outcome(r)]).toEqual([sql, 'value_too_large']);
      expect(r.error?.message).toMatch(/two sides of @> or <@, multiplied, stay below 1000000000/);
    }
    if (t.db.kind === 'postgres') expect(await stillRunning('%array_agg%jsonb_agg%')).toBe(0);
    // A document against a small pattern, and a caller's list against a column, run as before.
    const ok = await call(
      'db.query',
      {
        sql: 'SELECT count(*) AS n FROM orders o WHERE jsonb_build_object(?::text, o.note) @> ?::jsonb OR ARRAY[o.id] <@ ?::int[]',
        args: ['note', JSON.stringify({ note: 'alpha note 1' }), [-1]],
      },
      ALPHA,
    );
    expect([outcome(ok), (ok.value as { rows: unknown[] }).rows]).toEqual(['ok', [{ n: '1' }]]);
  });

  it("every data skill holds one of its tenant's slots (siblings: kpi.query, report.generate, entity.lookup, entity.list, entity.create, entity.update)", async () => {
    const heavy = Array.from({ length: limit }, () => call('db.query', { sql: HEAVY }, ALPHA));
    await until('alpha to hold all its slots', () => skills.slots.running(ALPHA) === limit);
    const siblings = [
      call('kpi.query', { metric: 'open_orders' }, ALPHA),
      call('report.generate', { report: 'revenue_by_region' }, ALPHA),
      call('entity.lookup', { entity: 'order', id: 1 }, ALPHA),
      call('entity.list', { entity: 'order' }, ALPHA),
      call('entity.create', { entity: 'order', values: { status: 'open', note: 'x' } }, ALPHA),
      call('entity.update', { entity: 'order', id: 1, values: { note: 'y' } }, ALPHA),
    ];
    // None of them reached the database: they wait in alpha's line, behind alpha's own statements.
    await until('the six calls to wait in their tenant line', () => skills.slots.waiting(ALPHA) === 6);
    const beta = await call('entity.lookup', { entity: 'order', id: 100000 }, BETA);
    expect(beta.ok).toBe(true);
    if (t.db.kind === 'postgres') expect(skills.slots.waiting(ALPHA)).toBe(6); // beta did not wait for any of them
    const results = (await Promise.all(siblings)).map(outcome);
    for (const o of results) expect(['ok', 'tenant_busy', 'write_refused', 'constraint_violated']).toContain(o);
    expect((await Promise.all(heavy)).map(outcome)).toEqual(Array(limit).fill('timeout'));
  });

  it('a write waits for a locked row no longer than its deadline, and slots another instance holds refuse it in the database (on a server)', async () => {
    if (t.db.kind === 'pglite') {
      // One session: no other transaction can hold a row or a slot meanwhile; the write runs and says so.
      expect(outcome(await call('entity.update', { entity: 'order', id: 2, values: { note: 'written' } }, ALPHA))).toBe('ok');
      return;
    }
    const other = t.ds.createQueryRunner();
    const second = t.ds.createQueryRunner();
    await other.connect();
    await second.connect();
    try {
      await other.startTransaction();
      await other.query('SELECT id FROM orders WHERE id = 2 FOR UPDATE');
      const locked = await call('entity.update', { entity: 'order', id: 2, values: { note: 'waits' } }, ALPHA);
      expect(locked.error).toMatchObject({ reason: 'timeout' });
      await other.rollbackTransaction();
      // Another instance runs two statements of alpha, each in a transaction of its own: they hold both of alpha's slots.
      for (const runner of [other, second]) {
        await runner.startTransaction();
        expect((await runner.query(TAKE_SLOT_SQL, [`zmodu:tenant:${ALPHA}`, LIMIT]))[0].taken).toBe(true);
      }
      expect((await call('entity.update', { entity: 'order', id: 2, values: { note: 'x' } }, ALPHA)).error).toMatchObject({
        reason: 'tenant_busy',
      });
      expect((await call('db.query', { sql: 'SELECT count(*) AS n FROM orders' }, ALPHA)).error).toMatchObject({ reason: 'tenant_busy' });
      expect(outcome(await call('entity.update', { entity: 'order', id: 100001, values: { note: 'beta' } }, BETA))).toBe('ok');
    } finally {
      for (const runner of [other, second]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }
    expect(outcome(await call('db.query', { sql: 'SELECT count(*) AS n FROM orders' }, ALPHA))).toBe('ok');
  });
});
