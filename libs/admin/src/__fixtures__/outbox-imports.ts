import { DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TestDatabase } from '@zmodu/db/testing';
import { GuardModule } from '@zmodu/guard';
import { OutboxModule, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { SkillsModule } from '@zmodu/skills';

/**
 * The imports of an admin test app over the outbox: the outbox table on `db`, the guard's in-memory stores, the skills,
 * and an OutboxModule whose relay runs only when asked (`runOnce`), with one topic, `always.fails`, whose receiver refuses.
 */
export async function outboxTestImports(db: TestDatabase): Promise<DynamicModule[]> {
  return [
    TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_OUTBOX_MIGRATIONS, migrationsRun: true })),
    GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
    SkillsModule.forRoot(),
    OutboxModule.forRoot({
      relay: { autoStart: false },
      handlers: { 'always.fails': () => Promise.reject(new Error('the receiver refused it')) },
    }),
  ];
}
