// One store option in every module that has a store: 'typeorm' (the default, on the app's DataSource), 'memory' where
// an in-process store keeps the module's promises, or a store of yours; one error when the DataSource is missing; and
// one list of migrations (zmoduMigrations) for every @zmodu package loaded, which creates every table a default store reads.
import { DynamicModule } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminSkillsModule, ZMODU_ADMIN_MIGRATIONS } from '@zmodu/admin';
import { ADMIN_CONFIG_STORE } from '@zmodu/admin/internal';
import { AGENT_JOB_STORE, AgentJobsModule, AgentModule, AgentWorkerModule, ZMODU_AGENT_MIGRATIONS } from '@zmodu/agent';
import { AGENT_RUN_STORE } from '@zmodu/agent/internal';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { DataSourceMissingException, GuardModule, ZMODU_GUARD_MIGRATIONS, zmoduMigrations } from '@zmodu/guard';
import { AUDIT_LOG_STORE, TOKEN_QUOTA_STORE } from '@zmodu/guard/internal';
import { MemoryModule, ZMODU_MEMORY_MIGRATIONS } from '@zmodu/memory';
import { MEMORY_STORE } from '@zmodu/memory/internal';
import { OutboxModule, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { OUTBOX_STORE } from '@zmodu/outbox/internal';
import { PipelineModule, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { PROPOSAL_STORE } from '@zmodu/pipeline/internal';
import { SkillsModule } from '@zmodu/skills';
import { DataSource } from 'typeorm';

const MEMORY_GUARD = { auditStore: 'memory', quotaStore: 'memory' } as const;

interface StoreCase {
  /** The option as the error names it. */
  readonly option: RegExp;
  readonly token: symbol;
  /** The module with its store given as `store` ('typeorm', 'memory', or undefined for the default). */
  readonly module: (store: 'typeorm' | 'memory' | undefined) => DynamicModule[];
  /** The class of the in-process store; null where 'memory' is refused. */
  readonly memory: string | null;
  readonly typeorm: string;
}

const agentBase = (): DynamicModule[] => [AgentModule.forRoot({ agents: [], guard: MEMORY_GUARD })];

const CASES: Record<string, StoreCase> = {
  'GuardModule auditStore': {
    option: /auditStore \(GuardModule\.forRoot, or AgentModule\.forRoot\(\{ guard \}\)\)/,
    token: AUDIT_LOG_STORE,
    module: (store) => [GuardModule.forRoot({ auditStore: store, quotaStore: 'memory' })],
    memory: 'InMemoryAuditLogStore',
    typeorm: 'TypeOrmAuditLogStore',
  },
  'GuardModule quotaStore': {
    option: /quotaStore \(GuardModule\.forRoot/,
    token: TOKEN_QUOTA_STORE,
    module: (store) => [GuardModule.forRoot({ auditStore: 'memory', quotaStore: store })],
    memory: 'InMemoryTokenQuotaStore',
    typeorm: 'TypeOrmTokenQuotaStore',
  },
  MemoryModule: {
    option: /MemoryModule\.forRoot\(\{ store \}\)/,
    token: MEMORY_STORE,
    module: (store) => [GuardModule.forRoot(MEMORY_GUARD), SkillsModule.forRoot(), MemoryModule.forRoot({ store })],
    memory: 'InMemoryMemoryStore',
    typeorm: 'TypeOrmMemoryStore',
  },
  AdminSkillsModule: {
    option: /AdminSkillsModule\.forRoot\(\{ store \}\)/,
    token: ADMIN_CONFIG_STORE,
    module: (store) => [
      ...agentBase(),
      AdminSkillsModule.forRoot({ store, audit: false, config: { keys: { 'desk.limit': { type: 'number' } } } }),
    ],
    memory: 'InMemoryAdminConfigStore',
    typeorm: 'TypeOrmAdminConfigStore',
  },
  AgentWorkerModule: {
    option: /AgentWorkerModule\.forRoot\(\{ runStore \}\)/,
    token: AGENT_RUN_STORE,
    module: (store) => [...agentBase(), AgentWorkerModule.forRoot({ runStore: store })],
    memory: 'InMemoryAgentRunStore',
    typeorm: 'TypeOrmAgentRunStore',
  },
  AgentJobsModule: {
    option: /AgentJobsModule\.forRoot\(\{ store \}\)/,
    token: AGENT_JOB_STORE,
    module: (store) => [...agentBase(), AgentWorkerModule.forRoot({ runStore: 'memory' }), AgentJobsModule.forRoot({ store })],
    memory: 'InMemoryAgentJobStore',
    typeorm: 'TypeOrmAgentJobStore',
  },
  OutboxModule: {
    option: /OutboxModule\.forRoot\(\{ store \}\)/,
    token: OUTBOX_STORE,
    module: (store) => [...agentBase(), OutboxModule.forRoot({ store: store as 'typeorm' | undefined, relay: { autoStart: false } })],
    memory: null,
    typeorm: 'TypeOrmOutboxStore',
  },
  PipelineModule: {
    option: /PipelineModule\.forRoot\(\{ store \}\)/,
    token: PROPOSAL_STORE,
    module: (store) => [
      ...agentBase(),
      PipelineModule.forRoot({ actions: {}, store: store as 'typeorm' | undefined, recoveryIntervalMs: 0 }),
    ],
    memory: null,
    typeorm: 'TypeOrmProposalStore',
  },
};

async function compile(imports: DynamicModule[]): Promise<TestingModule> {
  return Test.createTestingModule({ imports }).compile();
}

async function failure(imports: DynamicModule[]): Promise<unknown> {
  let app: TestingModule | undefined;
  try {
    app = await compile(imports);
    await app.init();
  } catch (err) {
    return err;
  } finally {
    await app?.close();
  }
  throw new Error('expected the boot to fail');
}

describe('the store option of every module', () => {
  it.each(Object.entries(CASES))(
    '%s: the default without a DataSource is the one DataSourceMissingException, naming the option',
    async (_name, c) => {
      for (const store of [undefined, 'typeorm'] as const) {
        const err = await failure(c.module(store));
        expect(err).toBeInstanceOf(DataSourceMissingException);
        expect((err as DataSourceMissingException).code).toBe('DataSourceMissingException');
        expect((err as Error).message).toMatch(c.option);
        expect((err as Error).message).toMatch(/migrations: zmoduMigrations\(\)/);
        expect((err as Error).message).toMatch(c.memory ? /or set it to 'memory'/ : /or set it to a store of your own\.$/);
      }
    },
  );

  it.each(Object.entries(CASES))("%s: 'memory' is an in-process store, or is refused at boot saying why", async (_name, c) => {
    if (c.memory) {
      const app = await compile(c.module('memory'));
      try {
        expect((app.get(c.token) as object).constructor.name).toBe(c.memory);
      } finally {
        await app.close();
      }
    } else {
      const err = await failure(c.module('memory'));
      expect(err).not.toBeInstanceOf(DataSourceMissingException);
      expect((err as Error).message).toMatch(c.option);
      expect((err as Error).message).toMatch(/'memory' is not offered here: .* commit.* transaction/);
    }
  });

  it.each(Object.entries(CASES))(
    "%s: a store that is none of the three fails the boot with the module's options error",
    async (_name, c) => {
      const err = await failure(c.module({ get: () => null } as never));
      expect(err).not.toBeInstanceOf(DataSourceMissingException);
      expect((err as Error).message).toMatch(
        /expected 'typeorm'.* or a store of your own \(an object with .*\), got an object without those methods/,
      );
    },
  );
});

describe('zmoduMigrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists the migrations of every @zmodu package loaded, once each, in timestamp order, then yours', () => {
    const all = zmoduMigrations();
    const lists = [
      ZMODU_GUARD_MIGRATIONS,
      ZMODU_AGENT_MIGRATIONS,
      ZMODU_PIPELINE_MIGRATIONS,
      ZMODU_OUTBOX_MIGRATIONS,
      ZMODU_MEMORY_MIGRATIONS,
      ZMODU_ADMIN_MIGRATIONS,
    ];
    expect(all).toHaveLength(lists.reduce((n, l) => n + l.length, 0));
    for (const list of lists) for (const m of list) expect(all).toContain(m);
    const stamps = all.map((m) => Number(/(\d{13})$/.exec((m as { name: string }).name)?.[1]));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    // A list of ours given again is not a duplicate (TypeORM refuses duplicates).
    expect(zmoduMigrations(ZMODU_GUARD_MIGRATIONS, ZMODU_AGENT_MIGRATIONS)).toEqual(all);
  });

  it('creates every table the default stores read: each module boots on it with its TypeORM store', async () => {
    const options = await db.options({ migrations: zmoduMigrations(ZMODU_AGENT_MIGRATIONS), migrationsRun: true });
    const ds = new DataSource(options);
    await ds.initialize();
    try {
      const tables: Array<{ table_name: string }> = await ds.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'zmodu\\_%' ORDER BY 1`,
      );
      const names = tables.map((t) => t.table_name);
      for (const table of [
        'zmodu_audit_log',
        'zmodu_token_usage',
        'zmodu_agent_runs',
        'zmodu_agent_jobs',
        'zmodu_proposals',
        'zmodu_outbox',
        'zmodu_memory',
        'zmodu_admin_config',
      ])
        expect(names).toContain(table);
    } finally {
      await ds.destroy();
    }
    for (const [name, c] of Object.entries(CASES)) {
      const app = await compile([TypeOrmModule.forRoot(await db.options()), ...c.module('typeorm')]);
      try {
        expect([name, (app.get(c.token) as object).constructor.name]).toEqual([name, c.typeorm]);
      } finally {
        await app.close();
      }
    }
  });
});
