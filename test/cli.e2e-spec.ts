import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { ALPHA, BETA, ENTITIES, KPIS, REPORTS, seedBusinessData } from '../libs/data/src/__fixtures__/business-fixture';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';

const ROOT = join(__dirname, '..');
const BIN = join(ROOT, 'bin', 'zmodu.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function zmodu(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

interface Call {
  config: string;
  tenant?: string;
  user?: string;
  /** Sent as --args: a string as it stands (JSON or not), anything else as its JSON. */
  args: unknown;
}

/** `zmodu ai call SKILL --config FILE [--tenant T] [--user U] --args JSON`. */
function aiCall(skill: string, { config, tenant, user, args }: Call): Promise<Run> {
  const argv = ['ai', 'call', skill, '--config', config];
  if (tenant !== undefined) argv.push('--tenant', tenant);
  if (user !== undefined) argv.push('--user', user);
  argv.push('--args', typeof args === 'string' ? args : JSON.stringify(args));
  return zmodu(...argv);
}

// Each test spawns the CLI from its TypeScript sources (bin/zmodu.js: each file transpiled once, then cached), up to 14 times:
// under a loaded machine that can pass the suite's 60 s default, so these tests get three minutes.
jest.setTimeout(180_000);

describe('zmodu CLI end to end', () => {
  let db: TestDatabase;
  let dir: string;
  let config: string;

  let writeConfig: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const ds = new DataSource(await db.options());
    await ds.initialize();
    await seedBusinessData(ds, 40);
    await ds.query('CREATE TABLE notes (id serial PRIMARY KEY, tenant_id text NOT NULL, body text NOT NULL)');
    await ds.query('CREATE INDEX notes_tenant_idx ON notes (tenant_id)');
    // Tenant ids that are integers in the database.
    await ds.query('CREATE TABLE accounts (id int PRIMARY KEY, tenant_no int NOT NULL, label text NOT NULL)');
    await ds.query('CREATE INDEX accounts_tenant_idx ON accounts (tenant_no)');
    await ds.query(`INSERT INTO accounts VALUES (1, 1, 'one-a'), (2, 1, 'one-b'), (3, 2, 'two-a'), (4, 7, 'seven-a')`);
    await ds.destroy(); // the CLI is another process: PGlite's folder is opened by one process at a time
    dir = mkdtempSync(join(tmpdir(), 'zmodu-cli-'));
    config = join(dir, 'zmodu.config.json');
    const base = {
      database: db.location,
      tenantColumn: 'tenant_id',
      entities: ENTITIES,
      kpis: KPIS,
      reports: REPORTS,
      limits: { timeoutMs: 3000 }, // above what a loaded machine takes for the quick statements; the cross join still times out
      // Every tenant's db.query runs under the second fence, which the suite installs first.
      fence: { mode: 'required', role: db.fenceRole },
      policy: { allow: ['db.query', 'entity.lookup', 'entity.list', 'kpi.query', 'report.generate'], deny: [], allowExecute: false },
    };
    writeFileSync(config, JSON.stringify(base));
    writeConfig = join(dir, 'write.config.json');
    writeFileSync(
      writeConfig,
      JSON.stringify({
        ...base,
        entities: [...ENTITIES, { name: 'note', table: 'notes', pk: 'id', tenantColumn: 'tenant_id', writable: ['body'] }],
        skills: ['db.query', 'entity.lookup', 'entity.create', 'entity.update'],
        permissions: ['entity:write'],
        policy: { allow: ['db.query', 'entity.lookup', 'entity.create', 'entity.update'], allowExecute: true },
      }),
    );
    const installed = await zmodu('ai', 'install-fence', '--config', config);
    if (installed.code !== 0) throw new Error(`install-fence failed: ${installed.stdout}${installed.stderr}`);
  });

  /** A config like the main one (or `base`), with these fields replaced. */
  const variant = (name: string, fields: Record<string, unknown>, base = config): string => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(base, 'utf8')), ...fields }));
    return file;
  };

  /** `zmodu ai call --batch FILE`: the lines (a string as it stands, anything else as its JSON), and each answer parsed. */
  const runBatch = async (configFile: string, name: string, lines: unknown[]) => {
    const file = join(dir, name);
    writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
    const r = await zmodu('ai', 'call', '--batch', file, '--config', configFile);
    return {
      ...r,
      out: r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    };
  };

  it('install-fence prints what it did, and a second run changes nothing that matters', async () => {
    const again = await zmodu('ai', 'install-fence', '--config', writeConfig);
    expect(again.code).toBe(0);
    const lines = again.stdout.trim().split('\n');
    expect(lines).toContain(`= role ${db.fenceRole}`);
    expect(lines).toContain('= the fence key');
    expect(lines).toContain('= policies of "public"."orders" (tenant_id text)');
    expect(lines).toContain('+ row-level security on "public"."notes"'); // the write config adds a table
    expect(lines.at(-1)).toBe(`fence installed for 5 table(s); db.query runs as ${db.fenceRole}`);
    expect(lines.filter((l) => l.startsWith('+ '))).toHaveLength(1);
  });

  it('audit-policy reports the second fence, and exits 1 when db.query is allowed without it', async () => {
    const ok = await zmodu('ai', 'audit-policy', '--config', config);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).secondFence).toEqual({ installed: true, role: db.fenceRole, problems: [], warnings: [] });
    const missingConfig = variant('missing-fence.json', { fence: { mode: 'auto', role: 'zmodu_never_installed' } });
    const missing = await zmodu('ai', 'audit-policy', '--config', missingConfig);
    expect(missing.code).toBe(1);
    const report = JSON.parse(missing.stdout);
    expect(report.secondFence.installed).toBe(false);
    expect(report.secondFence.problems[0]).toMatch(/role zmodu_never_installed does not exist: run `zmodu ai install-fence/);
  });

  it('exposes entity.create and entity.update when the config names them, through the same guard', async () => {
    const created = await aiCall('entity.create', {
      config: writeConfig,
      tenant: ALPHA,
      user: 'u1',
      args: { entity: 'note', values: { body: 'from the CLI' } },
    });
    expect(created.code).toBe(0);
    const record = JSON.parse(created.stdout);
    expect(record).toMatchObject({ entity: 'note', record: { body: 'from the CLI', tenant_id: ALPHA } });
    const id = record.record.id;
    const updated = await aiCall('entity.update', {
      config: writeConfig,
      tenant: ALPHA,
      user: 'u1',
      args: { entity: 'note', id, values: { body: 'edited' } },
    });
    expect(updated.code).toBe(0);
    const elsewhere = await aiCall('entity.update', {
      config: writeConfig,
      tenant: BETA,
      user: 'u2',
      args: { entity: 'note', id, values: { body: 'BETA was here' } },
    });
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ updated: false, found: false }); // another tenant's record is simply not found
    const read = await aiCall('db.query', { config: writeConfig, tenant: ALPHA, user: 'u1', args: { sql: 'SELECT body FROM notes' } });
    expect(JSON.parse(read.stdout).rows).toEqual([{ body: 'edited' }]);
    const tenantForced = await aiCall('entity.create', {
      config: writeConfig,
      tenant: ALPHA,
      user: 'u1',
      args: { entity: 'note', values: { body: 'x', tenant_id: BETA } },
    });
    expect(tenantForced.code).toBe(1);
    const readOnly = await aiCall('entity.create', { config, tenant: ALPHA, user: 'u1', args: { entity: 'note', values: { body: 'x' } } });
    expect(JSON.parse(readOnly.stdout)).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
  });

  it('audit-data: exit 0 on a clean model, 1 with the findings; strictData stops the commands that use the database', async () => {
    const clean = await zmodu('ai', 'audit-data', '--config', config);
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ tables: 4, findings: [], tenantTypes: ['text'] });
    const hazards = await zmodu('ai', 'audit-data', '--config', writeConfig);
    expect(hazards.code).toBe(1);
    expect(JSON.parse(hazards.stdout).findings).toEqual([
      expect.objectContaining({ code: 'shared_sequence', table: 'public.notes', fix: expect.stringMatching(/gen_random_uuid/) }),
    ]);
    const strictConfig = variant('strict.json', { strictData: true }, writeConfig);
    const stopped = await aiCall('db.query', { config: strictConfig, tenant: ALPHA, args: { sql: 'SELECT 1' } });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr.trim().split('\n')[0]).toMatch(/strictData\): the data model has 1 hazard/);
  });

  it('a config naming an unknown skill, a bad fence, database or limits gets one clear line and a failing exit', async () => {
    for (const [extra, message] of [
      [{ skills: ['db.query', 'db.drop'] }, /"skills" must be an array of: db\.query, .*entity\.create, entity\.update/],
      [{ fence: { mode: 'sometimes' } }, /"fence\.mode" must be "auto", "required" or "off"/],
      [{ fence: { role: 'Robert"); DROP' } }, /"fence\.role" must be a role name/],
      [{ database: { url: 5 } }, /"database\.url" must be a postgres:\/\/ URL/],
      [{ limits: { timeoutMs: 2147483000 } }, /limits\.timeoutMs must be a whole number of milliseconds, at most 10 minutes/],
      [{ limits: { timeoutMs: 'abc' } }, /limits\.timeoutMs must be a whole number/],
    ] as const) {
      const bad = variant('bad-skills.json', extra);
      const r = await zmodu('ai', 'export-skills', '--config', bad);
      expect(r.code).toBeGreaterThanOrEqual(1); // 2 for a config the CLI reads itself, 1 when the module refuses it
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  it('ai call --batch takes tenant and user as strings or safe integers; other values are invalid_call with the reason', async () => {
    const intConfig = variant('int-tenant.json', {
      entities: [{ name: 'account', table: 'accounts', pk: 'id', tenantColumn: 'tenant_no' }],
      kpis: [{ name: 'accounts', tenantSql: 'SELECT count(*) FROM accounts WHERE tenant_no = ?' }],
      reports: [],
      fence: { mode: 'off' },
      policy: { allow: ['db.query', 'entity.lookup', 'entity.list', 'kpi.query'], allowExecute: false },
    });
    const { code, out } = await runBatch(intConfig, 'int-tenant.jsonl', [
      { skill: 'db.query', args: { sql: 'SELECT id, tenant_no FROM accounts ORDER BY id' }, tenant: 1, user: 7 },
      { skill: 'entity.lookup', args: { entity: 'account', id: 4 }, tenant: 7, user: 7 },
      { skill: 'entity.lookup', args: { entity: 'account', id: 4 }, tenant: 1, user: 'u' },
      { skill: 'entity.list', args: { entity: 'account' }, tenant: '2' },
      { skill: 'kpi.query', args: { metric: 'accounts' }, tenant: 1 },
      { skill: 'db.query', args: { sql: 'SELECT id FROM accounts' }, tenant: 1.5 },
      '{"skill":"db.query","args":{"sql":"SELECT id FROM accounts"},"tenant":9007199254740993}', // above 2^53: JSON.parse rounds it
      { skill: 'db.query', args: { sql: 'SELECT id FROM accounts' }, tenant: true },
      { skill: 'db.query', args: { sql: 'SELECT id FROM accounts' }, tenant: { id: 1 } },
      { skill: 'db.query', args: { sql: 'SELECT id FROM accounts' }, tenant: 1, user: [7] },
      '{"skill":"db.query","args":{"sql":"SELECT id FROM accounts"},"tenant":1e400}',
      // Other spellings of tenant 1 or 7 that an integer column would read as that tenant: refused, never read.
      ...['01', ' 1', '+1', '0001', '\t7\n', '1.0'].map((tenant) => ({ skill: 'entity.list', args: { entity: 'account' }, tenant })),
      { skill: 'kpi.query', args: { metric: 'accounts' }, tenant: '007' },
    ]);
    expect(code).toBe(1);
    expect(out[0]).toMatchObject({
      ok: true,
      value: {
        rows: [
          { id: 1, tenant_no: 1 },
          { id: 2, tenant_no: 1 },
        ],
      },
    });
    expect(out[1]).toMatchObject({ ok: true, value: { found: true, record: { id: 4, tenant_no: 7, label: 'seven-a' } } });
    expect(out[2]).toMatchObject({ ok: true, value: { found: false } });
    expect(out[3]).toMatchObject({ ok: true, value: { rows: [{ id: 3, tenant_no: 2 }] } });
    expect(out[4]).toMatchObject({ ok: true, value: { metric: 'accounts', value: '2' } });
    for (const [i, message] of [
      [5, /^tenant must be a string or a whole number .*\(got 1\.5/],
      [6, /^tenant must be a string or a whole number up to 2\^53-1/],
      [7, /^tenant must be a string or a whole number \(got boolean\)/],
      [8, /^tenant must be a string or a whole number \(got object\)/],
      [9, /^user must be a string or a whole number \(got an array\)/],
      [10, /^tenant must be a string or a whole number .*\(got Infinity/],
    ] as const)
      expect([i, out[i]]).toEqual([
        i,
        expect.objectContaining({ ok: false, error: 'BadRequest', reason: 'invalid_call', message: expect.stringMatching(message) }),
      ]);
    for (const i of [11, 13, 14, 16, 17])
      expect([i, out[i]]).toEqual([i, expect.objectContaining({ ok: false, error: 'InvalidTenant', reason: 'invalid_tenant' })]);
    expect(out[11].message).toMatch(/"01" is not a whole number written plainly .* as the integer tenant column needs/);
    // ' 1' and '\t7\n' are no tenant id at all (scopeIdProblem): refused at the door, before any skill.
    expect(out[12]).toMatchObject({
      ok: false,
      error: 'BadRequest',
      reason: 'invalid_call',
      message: 'tenant begins or ends with a blank: send the id without surrounding blanks',
    });
    expect(out[15]).toMatchObject({
      ok: false,
      error: 'BadRequest',
      reason: 'invalid_call',
      message: 'tenant holds a NUL or control character',
    });
  });

  it('refuses a tenant or user that looks like another, on every door of the CLI, naming the flag (attack: --user lee\\u200b, --tenant \\u202e)', async () => {
    const call = await aiCall('entity.list', { config, tenant: ALPHA, user: 'lee\u200b', args: '{"entity":"order"}' });
    expect(call.code).toBe(2);
    expect(call.stderr).toMatch(/--user holds U\+200B, a character that shows as nothing/);
    const mcp = await zmodu('ai', 'mcp', '--config', config, '--tenant', `\u202e${ALPHA}`, '--user', 'lee');
    expect(mcp.code).toBe(2);
    expect(mcp.stderr).toMatch(/--tenant holds U\+202E/);
    const verify = await zmodu('ai', 'audit-verify', '--config', config, '--tenant', `${ALPHA}\u2066`);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toMatch(/--tenant holds U\+2066/);
    const { out } = await runBatch(config, 'look-alike.jsonl', [
      { skill: 'entity.list', args: { entity: 'order' }, tenant: ALPHA, user: 'lee\u200b' },
      { skill: 'entity.list', args: { entity: 'order' }, tenant: 'e\u0301quipe', user: 'lee' },
    ]);
    expect(out[0]).toMatchObject({
      ok: false,
      error: 'BadRequest',
      reason: 'invalid_call',
      message: expect.stringMatching(/^user holds U\+200B/),
    });
    expect(out[1]).toMatchObject({
      ok: false,
      reason: 'invalid_call',
      message: expect.stringMatching(/^tenant is not in Unicode normalization form C/),
    });
  });

  it('audit-policy exits 1 when the allow list names a skill that does not exist, naming it and the nearest skill', async () => {
    const typo = variant('typo.json', {
      policy: { allow: ['db.query', 'entity.lokup', 'report.generate', 'zzz'], deny: ['nothing.here'], allowExecute: false },
    });
    const r = await zmodu('ai', 'audit-policy', '--config', typo);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.unknownAllowed).toEqual([
      { name: 'entity.lokup', nearest: 'entity.lookup' },
      { name: 'zzz', nearest: null },
    ]);
    expect(report.unknownTools).toEqual(['entity.lokup', 'nothing.here', 'zzz']);
    expect(r.stderr).toMatch(/allow list names 'entity\.lokup', which is not a skill \(did you mean 'entity\.lookup'\?\)/);
    // An unknown name on the deny list alone disables nothing: not an exit 1.
    const denyOnly = variant('deny-only.json', {
      policy: { allow: ['db.query', 'entity.lookup'], deny: ['nothing.here'], allowExecute: false },
    });
    const ok = await zmodu('ai', 'audit-policy', '--config', denyOnly);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).unknownAllowed).toEqual([]);
  });

  it('kpi.query and report.generate are not offered when no metric or report exists, and an allow list naming them is reported', async () => {
    const bare = variant('no-kpis.json', { kpis: [], reports: undefined });
    const skills = await zmodu('ai', 'export-skills', '--config', bare);
    expect(skills.code).toBe(0);
    expect(JSON.parse(skills.stdout).map((s: { name: string }) => s.name)).toEqual(['db.query', 'entity.list', 'entity.lookup']);
    expect(skills.stdout).not.toMatch(/none registered/);
    const openapi = await zmodu('ai', 'openapi', '--config', bare);
    expect(Object.keys(JSON.parse(openapi.stdout).paths).sort()).toEqual([
      '/skills/db.query',
      '/skills/entity.list',
      '/skills/entity.lookup',
    ]);
    const policy = await zmodu('ai', 'audit-policy', '--config', bare);
    expect(policy.code).toBe(1);
    expect(JSON.parse(policy.stdout)).toMatchObject({
      unknownAllowed: [
        { name: 'kpi.query', nearest: null },
        { name: 'report.generate', nearest: null },
      ],
      effectiveTools: ['db.query', 'entity.list', 'entity.lookup'],
    });
    const called = await aiCall('kpi.query', { config: bare, tenant: ALPHA, args: '{"metric":"open_orders"}' });
    expect(JSON.parse(called.stdout)).toMatchObject({ error: 'ToolDenied' });
  });

  it('"audit": "database" writes every call, allowed or refused, to zmodu_audit_log before the process exits', async () => {
    const audited = variant('audited.json', { audit: 'database' });
    const ok = await aiCall('db.query', {
      config: audited,
      tenant: ALPHA,
      user: 'auditor',
      args: '{"sql":"SELECT count(*) AS n FROM orders"}',
    });
    expect([ok.code, ok.stderr, JSON.parse(ok.stdout).rows]).toEqual([0, '', [{ n: '40' }]]);
    const { out } = await runBatch(audited, 'audited.jsonl', [
      { skill: 'entity.lookup', args: { entity: 'order', id: 1 }, tenant: ALPHA, user: 'auditor' },
      { skill: 'order.submit', args: {}, tenant: ALPHA, user: 'auditor' },
    ]);
    expect(out.map((o) => o.ok)).toEqual([true, false]);
    const memory = await aiCall('db.query', {
      config,
      tenant: ALPHA,
      user: 'not-audited',
      args: '{"sql":"SELECT count(*) AS n FROM orders"}',
    });
    expect(memory.code).toBe(0);
    const ds = new DataSource(await db.options());
    await ds.initialize();
    try {
      const rows = await ds.query(
        `SELECT skill, tenant_id, user_id, decision, cause, outcome, agent FROM zmodu_audit_log WHERE run_id LIKE 'cli-%' ORDER BY id`,
      );
      expect(rows).toEqual([
        { skill: 'db.query', tenant_id: ALPHA, user_id: 'auditor', decision: 'allowed', cause: null, outcome: 'ok', agent: 'cli' },
        { skill: 'entity.lookup', tenant_id: ALPHA, user_id: 'auditor', decision: 'allowed', cause: null, outcome: 'ok', agent: 'cli' },
        expect.objectContaining({ skill: 'order.submit', user_id: 'auditor', decision: 'denied', cause: 'denied_not_listed' }),
      ]);
    } finally {
      await ds.destroy();
    }
    // The tenant's hash chain verifies; one changed column is found at its sequence number (PGlite: one process at a time).
    const intact = await zmodu('ai', 'audit-verify', '--config', audited, '--tenant', ALPHA);
    expect([intact.code, JSON.parse(intact.stdout)]).toEqual([0, { ok: true, entries: 3, head: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    const tamper = new DataSource(await db.options());
    await tamper.initialize();
    await tamper.query(`UPDATE zmodu_audit_log SET decision = 'allowed' WHERE tenant_id = $1 AND seq = 3`, [ALPHA]);
    await tamper.destroy();
    const altered = await zmodu('ai', 'audit-verify', '--config', audited, '--tenant', ALPHA);
    expect([altered.code, JSON.parse(altered.stdout)]).toEqual([1, { ok: false, firstBadSequence: 3, problem: 'altered' }]);
    const neither = await zmodu('ai', 'audit-verify', '--config', audited);
    expect([neither.code, neither.stderr]).toEqual([2, expect.stringMatching(/needs --tenant T .* or --untenanted/)]);
    const badAudit = variant('bad-audit.json', { audit: 'disk' });
    const bad = await aiCall('db.query', { config: badAudit, args: '{}' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/"audit" must be "memory" \(the default\) or "database"/);
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  it('ai call dispatches through the guard and prints the result as JSON', async () => {
    const r = await aiCall('db.query', { config, tenant: ALPHA, user: 'u1', args: { sql: 'SELECT count(*) AS n FROM orders' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: [{ n: '40' }], truncated: false });
  });

  it('ai call exits 1 with {"error","reason"} on a refusal', async () => {
    const denied = await aiCall('order.submit', { config, tenant: ALPHA, user: 'u1', args: '{}' });
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout)).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    const literal = await aiCall('db.query', { config, tenant: ALPHA, user: 'u1', args: { sql: "SELECT * FROM orders WHERE note = 'x'" } });
    expect(literal.code).toBe(1);
    expect(JSON.parse(literal.stdout)).toMatchObject({ error: 'QueryRefused', reason: 'literal_not_allowed' });
  });

  it('ai call --batch answers every line, in order, and survives refusals, bad lines and slow statements', async () => {
    const lines = [
      { skill: 'entity.lookup', args: { entity: 'order', id: 1 }, tenant: ALPHA, user: 'u' },
      'not json',
      { skill: 'db.query', args: { sql: 'SELECT * FROM secrets' }, tenant: ALPHA },
      {
        skill: 'db.query',
        args: { sql: 'SELECT count(*) FROM order_lines a, order_lines b, order_lines c, order_lines d, order_lines e' },
        tenant: ALPHA,
      },
      { skill: 'db.query', args: { sql: 'SELECT CAST(note AS integer) FROM orders' }, tenant: ALPHA },
      { skill: 'entity.lookup', args: { entity: 'order', id: 100000 }, tenant: ALPHA, user: 'u' },
      { skill: 'entity.lookup', args: { entity: 'order', id: 100000 }, tenant: BETA, user: 'u' },
      { skill: 'kpi.query', args: { metric: 'open_orders' }, tenant: ALPHA },
      { skill: 'entity.list', args: { entity: 'order' } },
    ];
    // The five-way join (line 4) would run for hours: it ends at db.query's deadline (its answer below: timeout), and the
    // lines after it are answered too. A batch that hung would be failed by jest's test timeout.
    const { code, out } = await runBatch(config, 'calls.jsonl', lines);
    expect(code).toBe(1);
    expect(out.map((o) => o.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(out[0]).toMatchObject({ ok: true, value: { found: true, record: { id: 1, tenant_id: ALPHA } } });
    expect(out[1]).toMatchObject({ ok: false, error: 'BadRequest', reason: 'invalid_json' });
    expect(out[2]).toMatchObject({ ok: false, error: 'QueryRefused', reason: 'table_not_allowed' });
    expect(out[3]).toMatchObject({ ok: false });
    expect(out[3].reason).toBe('timeout');
    expect(out[4]).toMatchObject({ ok: false, error: 'QueryFailed', reason: 'invalid_input' });
    expect(out[5]).toMatchObject({ ok: true, value: { found: false } });
    expect(out[6]).toMatchObject({ ok: true, value: { found: true, record: { tenant_id: BETA } } });
    expect(out[7]).toMatchObject({ ok: true, value: { metric: 'open_orders', value: expect.any(String) } });
    expect(out[8]).toMatchObject({ ok: false, error: 'TenantRequired' });
  });

  it('ai call --batch answers fuzzed lines (fast-check, seeded), one answer per line in order, never a crash or a stack', async () => {
    const PROTO = ['__proto__', 'constructor', 'prototype', 'toString'];
    const nasty = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.constantFrom(...PROTO, '', '\u0000', '\ud800', '💥', "'; DROP TABLE orders; --"),
      fc.integer({ min: 1000, max: 100_000 }).map((n) => 'y'.repeat(n)),
    );
    const value = fc.oneof(nasty, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    const call = fc.record(
      {
        skill: fc.oneof(fc.constantFrom('db.query', 'entity.lookup', 'entity.list', 'kpi.query', 'report.generate', ...PROTO), nasty),
        args: fc.oneof(fc.dictionary(fc.oneof(fc.constantFrom('sql', 'entity', 'id', 'metric', ...PROTO), fc.string()), value), value),
        tenant: fc.oneof(fc.constantFrom(ALPHA, BETA), value, fc.constantFrom(2 ** 53, -1, 1.5)),
        user: fc.oneof(fc.constant('u'), value),
        permissions: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constantFrom(...PROTO))), value),
      },
      { requiredKeys: ['skill'] },
    );
    const line = fc.oneof(
      call.map((c) => JSON.stringify(c)),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      nasty.map((t) => t.replace(/[\r\n]/g, ' ') || 'x'),
      fc.integer({ min: 100, max: 5_000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
    );
    const seed = Number(process.env.ZMODU_FUZZ_SEED ?? 20261201);
    const lines = fc.sample(line, { seed, numRuns: Number(process.env.ZMODU_FUZZ_RUNS ?? 40) * 2 });
    const r = await runBatch(config, 'fuzz.jsonl', lines);
    expect([0, 1]).toContain(r.code);
    const out = r.out as Array<{ ok: boolean; line: number; error?: string }>;
    const expected = lines.map((l, i) => (l.trim() === '' ? null : i + 1)).filter((n) => n !== null);
    expect(out.map((o) => o.line)).toEqual(expected);
    for (const o of out) if (!o.ok) expect(typeof o.error).toBe('string');
    expect(r.stdout).not.toMatch(/\bat [\w$.<>]+ \(|node_modules|\.ts:\d+:\d+/);
    expect(r.stderr).not.toMatch(/\bat [\w$.<>]+ \(/);
  });

  it('export-skills prints the catalog', async () => {
    const r = await zmodu('ai', 'export-skills', '--config', config);
    expect(r.code).toBe(0);
    const skills = JSON.parse(r.stdout);
    expect(skills.map((s: { name: string }) => s.name)).toEqual([
      'db.query',
      'entity.list',
      'entity.lookup',
      'kpi.query',
      'report.generate',
    ]);
    expect(skills[0]).toMatchObject({ action: 'read', requiredPermission: null, parameters: { type: 'object', required: ['sql'] } });
  });

  it('openapi prints an OpenAPI 3.1 document that passes a standard validator', async () => {
    const r = await zmodu('ai', 'openapi', '--config', config, '--title', 'Desk skills');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { title: 'Desk skills' } });
    expect(Object.keys(doc.paths)).toContain('/skills/db.query');
    const file = join(dir, 'openapi.json');
    writeFileSync(file, r.stdout);
    const validator = join(ROOT, 'node_modules', '@seriousme', 'openapi-schema-validator', 'bin', 'validate-api-cli.js');
    const verdict = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [validator, file], (err, stdout) => resolve({ code: err ? 1 : 0, out: stdout })),
    );
    expect(JSON.parse(verdict.out)).toEqual({ valid: true });
    expect(verdict.code).toBe(0);
  });

  it('audit-policy exits 0 on a healthy policy and 1 on a blind spot or an inert one', async () => {
    const healthy = await zmodu('ai', 'audit-policy', '--config', config);
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({ inert: false, hasClassBlindSpot: false });
    const inertConfig = join(dir, 'inert.json');
    writeFileSync(inertConfig, JSON.stringify({ entities: ENTITIES, policy: { allow: [], allowExecute: false } }));
    const inert = await zmodu('ai', 'audit-policy', '--config', inertConfig);
    expect(inert.code).toBe(1);
    expect(JSON.parse(inert.stdout)).toMatchObject({ inert: true });
  });

  it('--help works on every command, and bad flags or config give one clear line and exit 2', async () => {
    for (const args of [
      ['--help'],
      ['ai', '--help'],
      ['ai', 'call', '--help'],
      ['ai', 'export-skills', '--help'],
      ['ai', 'openapi', '--help'],
      ['ai', 'audit-policy', '--help'],
      ['ai', 'install-fence', '--help'],
      ['ai', 'audit-data', '--help'],
      ['ai', 'audit-verify', '--help'],
    ]) {
      const r = await zmodu(...args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/usage:/);
    }
    const cases: Array<[string[], RegExp]> = [
      [['ai', 'call', 'db.query', '--config', config, '--bogus'], /unknown option --bogus/],
      [['ai', 'call', 'db.query', '--config', join(dir, 'missing.json')], /cannot read config file/],
      [['ai', 'call', 'db.query', '--config', config, '--args', '{nope'], /--args is not valid JSON/],
      [['ai', 'nonsense'], /unknown command 'ai nonsense'/],
      [['ai', 'call', 'db.query'], /--config FILE is required/],
    ];
    for (const [args, message] of cases) {
      const r = await zmodu(...args);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
    const badJson = join(dir, 'bad.json');
    writeFileSync(badJson, '{"entities": [');
    const r = await zmodu('ai', 'export-skills', '--config', badJson);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not valid JSON/);
  });
});

describe('zmodu CLI on the application itself (--app FILE#Module)', () => {
  const APP = 'test/fixtures/cli-app/desk-app.module.ts#DeskAppModule';
  const talking = /^zmodu: talking to the application .*desk-app\.module\.ts#DeskAppModule \(2 skills\)$/m;

  it("calls the app's own skill through its dispatcher, under its agent's policy, and says which it talks to", async () => {
    const r = await zmodu('ai', 'call', 'desk.quote', '--app', APP, '--tenant', 'acme', '--user', 'u1', '--args', '{"symbol":"ACME"}');
    expect([r.code, JSON.parse(r.stdout)]).toEqual([0, { symbol: 'ACME', price: 101.5, tenant: 'acme', user: 'u1', agent: 'desk' }]);
    expect(r.stderr).toMatch(talking);
    expect(r.stderr).toMatch(/calls run under the policy of agent 'desk'/);
    // The agent's policy holds: its execute-class skill is refused, and so is a name it does not list.
    const denied = await zmodu('ai', 'call', 'desk.cancel', '--app', APP, '--tenant', 'acme', '--user', 'u1');
    expect([denied.code, JSON.parse(denied.stdout)]).toEqual([1, { error: 'ToolDenied', reason: 'denied_execute_class' }]);
    const typo = await zmodu('ai', 'call', 'desk.qoute', '--app', APP, '--tenant', 'acme', '--user', 'u1');
    expect([typo.code, JSON.parse(typo.stdout).reason]).toEqual([1, 'denied_not_listed']);
    const refused = await zmodu('ai', 'call', 'desk.quote', '--app', APP, '--tenant', 'acme', '--args', '{"symbol":"NONE"}');
    expect([refused.code, JSON.parse(refused.stdout).reason]).toEqual([1, 'unknown_symbol']);
  });

  it('answers a batch against the app, one line per call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zmodu-cli-app-'));
    try {
      const file = join(dir, 'calls.jsonl');
      writeFileSync(
        file,
        [
          { skill: 'desk.quote', args: { symbol: 'A' }, tenant: 'acme', user: 'u1' },
          { skill: 'desk.cancel', tenant: 'acme', user: 'u1' },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n'),
      );
      const r = await zmodu('ai', 'call', '--batch', file, '--app', APP, '--agent', 'desk');
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(r.code).toBe(1);
      expect(lines).toEqual([
        { ok: true, line: 1, value: expect.objectContaining({ symbol: 'A', tenant: 'acme' }) },
        { ok: false, line: 2, error: 'ToolDenied', reason: 'denied_execute_class' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exports the app's catalog and audits each agent's policy", async () => {
    const skills = await zmodu('ai', 'export-skills', '--app', APP);
    expect(skills.code).toBe(0);
    expect((JSON.parse(skills.stdout) as { name: string }[]).map((s) => s.name)).toEqual(['desk.cancel', 'desk.quote']);
    expect(skills.stderr).toMatch(talking);
    const policy = await zmodu('ai', 'audit-policy', '--app', APP);
    // The desk agent lists an execute-class skill it may not execute: a blind spot, exit 1.
    expect([policy.code, JSON.parse(policy.stdout).agents.desk]).toEqual([
      1,
      expect.objectContaining({ hasClassBlindSpot: true, classDeniedTools: ['desk.cancel'], effectiveTools: ['desk.quote'] }),
    ]);
  });

  it('refuses what cannot be the app, naming what to give, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['ai', 'call', 'x', '--app', 'no/such.module.js#AppModule'],
        /--app: no file .*no\/such\.module\.js .*dist\/app\.module\.js#AppModule/,
      ],
      [
        ['ai', 'export-skills', '--app', 'test/fixtures/cli-app/desk-app.module.ts#Nope'],
        /exports no module 'Nope' \(its exported classes: DeskSkills, DeskAppModule\)/,
      ],
      [['ai', 'call', 'x', '--app', APP, '--config', 'zmodu.config.json'], /--config F .* or --app FILE#Module .*not both/],
      [
        ['ai', 'call', 'desk.quote', '--app', APP, '--agent', 'nobody', '--tenant', 'acme'],
        /no agent 'nobody' in the application \(agents: desk\)/,
      ],
      [['ai', 'call', 'x', '--config', 'zmodu.config.json', '--agent', 'desk'], /--agent names an agent of --app/],
      [['ai', 'export-skills', '--app', `${APP}#x y`], /--app takes FILE#ExportedModule/],
    ];
    for (const [argv, message] of cases) {
      const r = await zmodu(...argv);
      expect([argv.join(' '), r.code, r.stdout]).toEqual([argv.join(' '), 2, '']);
      expect(r.stderr).toMatch(message);
    }
  });
});
