import { InMemoryAuditLogStore } from '@zmodu/guard/internal';
import { sampleAuditEntry } from '@zmodu/guard/testing';
import { AuditTenantForbiddenException } from '../exceptions/audit-tenant-forbidden.exception';
import { InvalidAuditFilterException } from '../exceptions/invalid-audit-filter.exception';
import { AUDIT_CSV_COLUMNS, auditCsv, parseAuditExport, readAuditPage } from './audit-export';

const acme = { tenantId: 'acme' };

function refusal(raw: unknown, scope = acme): { field?: string; name: string; message: string } {
  try {
    parseAuditExport(raw, scope);
  } catch (err) {
    return err as InvalidAuditFilterException;
  }
  throw new Error('expected a refusal');
}

describe('audit export', () => {
  it('scopes a tenant admin to its own tenant, whatever the filters say', () => {
    expect(parseAuditExport({}, acme).query).toEqual({ tenantId: 'acme', limit: 100 });
    expect(parseAuditExport({ tenant: 'acme' }, acme).query.tenantId).toBe('acme');
    expect(refusal({ tenant: 'globex' })).toBeInstanceOf(AuditTenantForbiddenException);
    expect(refusal({ tenant: 'constructor' })).toBeInstanceOf(AuditTenantForbiddenException);
    expect(refusal({}, { tenantId: null } as never)).toBeInstanceOf(AuditTenantForbiddenException);
    // A platform admin may name a tenant, or read them all.
    expect(parseAuditExport({ tenant: 'globex' }, { tenantId: 'acme', allTenants: true }).query.tenantId).toBe('globex');
    expect(parseAuditExport({}, { tenantId: 'acme', allTenants: true }).query.tenantId).toBeUndefined();
  });

  it('maps every filter to the store query, numbers given as text included', () => {
    const parsed = parseAuditExport(
      {
        kind: 'error',
        decision: 'allowed',
        skill: 'db.query',
        agent: 'analyst',
        run: 'r-1',
        user: 'u-1',
        since: '2026-01-01',
        until: '2026-02-01T00:00:00Z',
        limit: '25',
        cursor: '41',
        format: 'csv',
      },
      acme,
    );
    expect(parsed).toEqual({
      format: 'csv',
      query: {
        tenantId: 'acme',
        outcome: 'error',
        decision: 'allowed',
        skill: 'db.query',
        agent: 'analyst',
        runId: 'r-1',
        userId: 'u-1',
        since: new Date('2026-01-01T00:00:00Z'),
        until: new Date('2026-02-01T00:00:00Z'),
        limit: 25,
        afterId: '41',
      },
    });
  });

  it.each([
    [{ kind: 'exploded' }, 'kind'],
    [{ decision: 'maybe' }, 'decision'],
    [{ format: 'xml' }, 'format'],
    [{ since: 'yesterday' }, 'since'],
    [{ until: '2026-13-45' }, 'until'],
    [{ since: '2026-02-01', until: '2026-01-01' }, 'since'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 1001 }, 'limit'],
    [{ limit: '1e3' }, 'limit'],
    [{ limit: 2.5 }, 'limit'],
    [{ cursor: '1 OR 1=1' }, 'cursor'],
    [{ cursor: '-1' }, 'cursor'],
    [{ cursor: '9223372036854775808' }, 'cursor'],
    [{ cursor: '9999999999999999999' }, 'cursor'],
    [{ skill: 'a'.repeat(201) }, 'skill'],
    [{ agent: 'bad\nname' }, 'agent'],
    [{ run: 42 }, 'run'],
    [{ tenants: 'all' }, 'tenants'],
    [[], 'filters'],
    ['kind=error', 'filters'],
  ])('refuses %j naming %s', (raw, field) => {
    const err = refusal(raw);
    expect(err).toBeInstanceOf(InvalidAuditFilterException);
    expect(err.field).toBe(field);
    expect(err.message.length).toBeGreaterThan(10);
  });

  it('refuses a filter named like a prototype member instead of reading it from the prototype', () => {
    const raw = JSON.parse('{"__proto__": {"tenant": "globex"}}') as unknown;
    expect(refusal(raw).field).toBe('__proto__');
    expect(refusal({ constructor: 'x' }).field).toBe('constructor');
  });

  it('pages through the audit in id order with a cursor, to the last page', async () => {
    const store = new InMemoryAuditLogStore();
    await store.append(Array.from({ length: 5 }, (_, i) => sampleAuditEntry(`r${i}`)));
    await store.append([sampleAuditEntry('other', { tenantId: 'globex' })]);
    const runs: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await readAuditPage(store, parseAuditExport({ limit: 2, ...(cursor ? { cursor } : {}) }, acme));
      runs.push(...page.entries.map((e) => e.runId));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(runs).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(pages).toBe(3);
  });

  it('writes RFC 4180 CSV with a header, every field quoted, JSON arguments and no formula a spreadsheet would run', async () => {
    const store = new InMemoryAuditLogStore();
    await store.append([
      sampleAuditEntry('r,1', {
        agent: '=HYPERLINK("http://evil")',
        approvers: ['alice', 'bob'],
        proposalId: 'p-1',
        args: { note: 'line\nbreak', qty: 2 },
        result: { ok: true },
        cause: '@cmd',
      }),
      sampleAuditEntry('r2', { userId: null, agent: null }),
    ]);
    const page = await readAuditPage(store, parseAuditExport({ format: 'csv' }, acme));
    const csv = auditCsv(page.entries);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(AUDIT_CSV_COLUMNS.map((c) => `"${c}"`).join(','));
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(csv).toContain('"r,1"');
    expect(csv).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(csv).toContain(`"'@cmd"`);
    expect(csv).toContain('"alice;bob"');
    expect(csv).toContain('"{""note"":""line\\nbreak"",""qty"":2}"');
    // The second row: empty cells for the nulls, the same number of columns.
    const last = lines[lines.length - 2];
    expect(last.startsWith(`"${page.entries[1].id}",`)).toBe(true);
    expect(last.split(',')).toHaveLength(AUDIT_CSV_COLUMNS.length);
  });

  it("never lets a ';'-separated spreadsheet run a tool name as a formula (attack: skill x;=cmd|' /C calc'!A0, ' =cmd')", async () => {
    const store = new InMemoryAuditLogStore();
    await store.append([
      sampleAuditEntry('r1', { skill: "x;=cmd|' /C calc'!A0", agent: ' =cmd', cause: '\u3000@cmd', approvers: ['lee', '=1+1'] }),
    ]);
    const page = await readAuditPage(store, parseAuditExport({ format: 'csv' }, acme));
    const row = auditCsv(page.entries).split('\r\n')[1];
    // Each field quoted whole (a ';' or blank inside never starts a cell of its own), each formula lead behind a `'`.
    expect(row).toContain(`"x;=cmd|' /C calc'!A0"`);
    expect(row).toContain(`"' =cmd"`);
    expect(row).toContain(`"'\u3000@cmd"`);
    expect(row).toContain(`"lee;=1+1"`);
  });
});
