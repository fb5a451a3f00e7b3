import { DynamicModule } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { Guard, GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillsModule } from '@zmodu/skills';
import { OUTBOX_STORE } from '@zmodu/outbox/internal';
import { OutboxModule, OutboxModuleOptions, OutboxStore, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { TestDatabase } from '@zmodu/db/testing';

/** The business table of the test command, and the table its delivery handler applies effects to. */
export class LedgerTables1764461400000 implements MigrationInterface {
  name = 'LedgerTables1764461400000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE IF NOT EXISTS ledger (run_id text PRIMARY KEY, tenant_id text NOT NULL, account text NOT NULL, amount integer NOT NULL)',
    );
    await q.query('CREATE TABLE IF NOT EXISTS applied (event_id uuid PRIMARY KEY, account text NOT NULL, amount integer NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE applied');
    await q.query('DROP TABLE ledger');
  }
}

export async function startOutboxApp(db: TestDatabase, options: Partial<OutboxModuleOptions> = {}, extra: DynamicModule[] = []) {
  const dsOptions = await db.options({
    migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_OUTBOX_MIGRATIONS, LedgerTables1764461400000],
    migrationsRun: true,
  });
  const app: TestingModule = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(dsOptions),
      GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
      SkillsModule.forRoot(),
      OutboxModule.forRoot({ relay: { autoStart: false }, ...options }),
      ...extra,
    ],
  }).compile();
  await app.init();
  const ds = app.get<DataSource>(getDataSourceToken());
  const dispatcher = app.get(SkillDispatcher);
  const store = app.get<OutboxStore>(OUTBOX_STORE);
  /** A skill call as user u1 of tenant acme through agent ops, unless `who` says otherwise. */
  const call = (
    skill: string,
    args: unknown,
    runId: string,
    permissions = ['command:execute', 'entity:write'],
    who: { tenantId?: string; userId?: string; agent?: string } = {},
  ) =>
    dispatcher.dispatch(
      createSkillContext({
        guard: new Guard({ allow: [skill], allowExecute: true }),
        tenantId: who.tenantId ?? 'acme',
        userId: who.userId ?? 'u1',
        permissions,
        runId,
        agent: who.agent ?? 'ops',
      }),
      skill,
      args,
    );
  return { app, ds, store, call };
}
