import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule } from '@zmodu/guard';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { SkillsModule } from '@zmodu/skills';
import { DataSkillsModule } from '../data-skills.module';
import { EntitySpec } from '../data-skills.options';
import { auditDataModel } from './data-audit';

/** A schema with each hazard once, and one table that has none. */
const SCHEMA = [
  // int tenant, no tenant index, a global UNIQUE on a writable column, a serial id
  'CREATE TABLE accounts (id serial PRIMARY KEY, tenant_no int NOT NULL, email text NOT NULL UNIQUE, nickname text)',
  'CREATE UNIQUE INDEX accounts_lower_nick ON accounts (lower(nickname))',
  // text tenant, indexed, UUID ids, unique per tenant: clean, but its tenant type differs from accounts'
  'CREATE TABLE notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), tenant_no text NOT NULL, code text NOT NULL, body text, UNIQUE (tenant_no, code))',
  // an identity column
  'CREATE TABLE tickets (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_no int NOT NULL, title text NOT NULL)',
  'CREATE INDEX tickets_tenant ON tickets (tenant_no, title)',
  // views over tenant data
  'CREATE VIEW account_emails AS SELECT tenant_no, email FROM accounts',
  'CREATE VIEW account_emails_invoker WITH (security_invoker = true) AS SELECT tenant_no, email FROM accounts',
  'CREATE MATERIALIZED VIEW ticket_counts AS SELECT tenant_no, count(*) AS n FROM tickets GROUP BY tenant_no',
  // clean and int: the reference point
  'CREATE TABLE good (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), tenant_no int NOT NULL, code text NOT NULL, UNIQUE (tenant_no, code))',
];

const ENTITIES: EntitySpec[] = [
  { name: 'account', table: 'accounts', pk: 'id', tenantColumn: 'tenant_no', writable: ['email', 'nickname'] },
  { name: 'note', table: 'notes', pk: 'id', tenantColumn: 'tenant_no', writable: ['code', 'body'] },
  { name: 'ticket', table: 'tickets', pk: 'id', tenantColumn: 'tenant_no', writable: ['title'] },
  { name: 'account_email', table: 'account_emails', pk: 'email', tenantColumn: 'tenant_no' },
  { name: 'account_email_invoker', table: 'account_emails_invoker', pk: 'email', tenantColumn: 'tenant_no' },
  { name: 'ticket_count', table: 'ticket_counts', pk: 'tenant_no', tenantColumn: 'tenant_no' },
  { name: 'good', table: 'good', pk: 'id', tenantColumn: 'tenant_no', writable: ['code'] },
  { name: 'ghost', table: 'ghosts', pk: 'id', tenantColumn: 'tenant_no' },
  { name: 'wrong_column', table: 'good', pk: 'id', tenantColumn: 'tenant_id' },
];

describe('data-model audit', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = new DataSource(await db.options());
    await ds.initialize();
    for (const sql of SCHEMA) await ds.query(sql);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await db?.drop();
  });

  const audited = () => ENTITIES.map((e) => ({ name: e.name, table: e.table, tenantColumn: e.tenantColumn, writable: e.writable }));

  it('finds each hazard of the fixture schema, on its table, with what to do', async () => {
    const { findings, tables } = await auditDataModel(ds, audited());
    expect(tables).toBe(ENTITIES.length);
    const got = findings.map((f) => `${f.code} ${f.table}`).sort();
    expect(got).toEqual(
      [
        'missing_table public.ghosts',
        'missing_tenant_column public.good',
        'no_tenant_index public.accounts',
        'shared_sequence public.accounts',
        'shared_sequence public.tickets',
        'unique_without_tenant public.accounts',
        'unique_without_tenant public.accounts',
        'view public.account_emails',
        'view public.ticket_counts',
        expect.stringMatching(/^tenant_type_mismatch public\.accounts, public\.notes/),
      ].sort((a, b) => String(a).localeCompare(String(b))),
    );
    const unique = findings.filter((f) => f.code === 'unique_without_tenant');
    expect(unique.map((f) => f.detail).join('\n')).toMatch(/accounts_email_key .*email without tenant_no/);
    expect(unique.map((f) => f.detail).join('\n')).toMatch(/accounts_lower_nick .*\(an expression\)/);
    expect(findings.find((f) => f.code === 'no_tenant_index')!.fix).toBe('CREATE INDEX ON public.accounts (tenant_no)');
    expect(findings.find((f) => f.code === 'view' && f.table === 'public.account_emails')!.fix).toMatch(/security_invoker = true/);
    expect(findings.find((f) => f.code === 'tenant_type_mismatch')!.detail).toMatch(/public\.accounts: integer.*public\.notes: text/);
  });

  it('a clean model has no finding', async () => {
    const clean = audited().filter((e) => ['good', 'account_email_invoker'].includes(e.name));
    expect((await auditDataModel(ds, clean)).findings).toEqual([]);
  });

  const boot = async (strictData: boolean) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options()),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        DataSkillsModule.forRoot({ entities: ENTITIES.filter((e) => e.name !== 'wrong_column'), strictData, fence: { mode: 'off' } }),
      ],
    }).compile();
    try {
      await moduleRef.init();
    } finally {
      await moduleRef.close();
    }
  };

  it('at boot, each finding is a warning; with strictData, a boot error that lists them', async () => {
    // The test database is opened by one process at a time (PGlite): free it for the module's own DataSource.
    await ds.destroy();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await boot(false);
      const warned = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.startsWith('data model: '));
      expect(warned.some((m) => m.startsWith('data model: unique_without_tenant on public.accounts'))).toBe(true);
      expect(warned.some((m) => m.startsWith('data model: shared_sequence on public.tickets'))).toBe(true);
    } finally {
      warn.mockRestore();
    }
    try {
      await expect(boot(true)).rejects.toThrow(
        /strictData\): the data model has 9 hazard\(s\):\n- .*\n- missing_table on public\.ghosts: entity ghost names/s,
      );
    } finally {
      ds = new DataSource(await db.options());
      await ds.initialize();
    }
  });
});
