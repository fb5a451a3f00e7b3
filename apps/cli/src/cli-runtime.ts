import { randomUUID } from 'node:crypto';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EmbeddedDatabaseLockedException, embeddedDataSourceOptions, openEmbeddedDatabase, serverDataSourceOptions } from '@zmodu/db';
import { Guard, GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { TypeOrmAuditLogStore } from '@zmodu/guard/internal';
import { createSkillContext, SkillCallResult, SkillDispatcher, SkillRegistry, SkillsModule } from '@zmodu/skills';
import { BusinessSkills, DataSkillsModule } from '@zmodu/data';
import { DataSource } from 'typeorm';
import { CliConfig } from './cli-config';

export interface CallRequest {
  readonly skill: string;
  readonly args: unknown;
  readonly tenant?: string | null;
  readonly user?: string | null;
  readonly permissions?: readonly string[];
}

/**
 * The config's embedded database folder. Held by another process (the app that uses it, most often), it is refused; the
 * message says who holds it and how to give the CLI the app's PostgreSQL server instead.
 */
async function openEmbedded(dataDir: string) {
  try {
    return await openEmbeddedDatabase({ dataDir });
  } catch (err) {
    if (!(err instanceof EmbeddedDatabaseLockedException)) throw err;
    throw new Error(
      `${err.message} For this command: stop the app, or run the app on PostgreSQL (DATABASE_URL) and give the config the ` +
        `same server: "database": { "url": "postgres://..." } in place of "dataDir".`,
    );
  }
}

/** The skills of a config, behind the same registry, dispatcher and guard as in an application. */
export class CliRuntime {
  private constructor(
    private readonly app: INestApplicationContext,
    private readonly config: CliConfig,
    private readonly dataSource?: DataSource,
  ) {}

  /**
   * `withDatabase`: connect for calls; the catalog commands need no database. `admin`: skip the
   * boot checks (fence lookup, strictData) for the commands that report or repair them.
   */
  static async start(config: CliConfig, withDatabase: boolean, admin = false): Promise<CliRuntime> {
    let dataSource: DataSource | undefined;
    // Calls audited to the database: the guard's tables, made by its migrations, in the config's database.
    const auditToDatabase = withDatabase && !admin && config.audit === 'database';
    if (withDatabase) {
      if (!config.database) throw new Error('the config has no "database": add { "url": "postgres://..." } or { "dataDir": "..." }');
      const extra = auditToDatabase ? { migrations: ZMODU_GUARD_MIGRATIONS } : {};
      const options = config.database.url
        ? serverDataSourceOptions(config.database.url, { poolSize: 4, ...extra })
        : embeddedDataSourceOptions(await openEmbedded(config.database.dataDir as string), extra);
      dataSource = new DataSource(options);
      await dataSource.initialize();
      try {
        if (auditToDatabase) await dataSource.runMigrations({ transaction: 'each' });
      } catch (err) {
        await dataSource.destroy();
        throw err;
      }
    }
    const auditStore = auditToDatabase && dataSource ? new TypeOrmAuditLogStore(dataSource) : 'memory';
    @Module({
      imports: [
        GuardModule.forRoot({ auditStore, quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        DataSkillsModule.forRoot({
          entities: config.entities,
          dbQueryTenantColumn: config.tenantColumn,
          kpis: config.kpis,
          reports: config.reports,
          limits: config.limits,
          skills: config.skills,
          // The commands that report or repair the fence and the data model (admin) skip their boot checks.
          fence: admin || !dataSource ? { mode: 'off' } : config.fence,
          strictData: admin ? false : config.strictData,
          dataSource,
        }),
      ],
    })
    class CliModule {}
    try {
      const app = await NestFactory.createApplicationContext(CliModule, { logger: false, abortOnError: false });
      return new CliRuntime(app, config, dataSource);
    } catch (err) {
      await dataSource?.destroy();
      throw err;
    }
  }

  get registry(): SkillRegistry {
    return this.app.get(SkillRegistry);
  }

  get dispatcher(): SkillDispatcher {
    return this.app.get(SkillDispatcher);
  }

  get businessSkills(): BusinessSkills {
    return this.app.get(BusinessSkills);
  }

  /** The connected database (commands that need one start with it). */
  get database(): DataSource {
    if (!this.dataSource) throw new Error('the config has no "database"');
    return this.dataSource;
  }

  /** One call through the dispatcher, under the config's policy. Never throws for a refusal. */
  async call(req: CallRequest): Promise<SkillCallResult> {
    const ctx = createSkillContext({
      guard: new Guard(this.config.policy),
      tenantId: req.tenant ?? undefined,
      userId: req.user ?? undefined,
      permissions: req.permissions ?? this.config.permissions ?? [],
      runId: `cli-${randomUUID()}`,
      agent: 'cli',
    });
    return this.app.get(SkillDispatcher).dispatch(ctx, req.skill, req.args);
  }

  /**
   * Closes the application first: the guard flushes the audit entries (to the database, with "audit": "database")
   * before the database closes.
   */
  async close(): Promise<void> {
    try {
      await this.app.close();
    } finally {
      await this.dataSource?.destroy();
    }
  }
}
