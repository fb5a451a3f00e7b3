import { Test } from '@nestjs/testing';
import { AgentAuditLog } from './audit/agent-audit-log';
import { DataSourceMissingException } from '@zmodu/core';
import { GuardModule } from './guard.module';
import { TokenQuota } from './quota/token-quota';

describe('GuardModule', () => {
  it('fails boot without a TypeORM DataSource for its default stores, saying what to import or choose', async () => {
    const compiling = Test.createTestingModule({ imports: [GuardModule.forRoot()] }).compile();
    await expect(compiling).rejects.toThrow(DataSourceMissingException);
    await expect(compiling).rejects.toThrow(
      /auditStore .* is 'typeorm' \(the default\).*no TypeORM DataSource: import TypeOrmModule\.forRoot\(\{ \.\.\., migrations: zmoduMigrations\(\).*or set it to 'memory'/,
    );
  });

  it('boots on in-memory stores, and forRootAsync takes its options from a factory', async () => {
    const app = await Test.createTestingModule({
      imports: [
        GuardModule.forRootAsync({ useFactory: () => ({ auditStore: 'memory', quotaStore: 'memory', quota: { period: 'month' } }) }),
      ],
    }).compile();
    expect(app.get(AgentAuditLog)).toBeInstanceOf(AgentAuditLog);
    expect(app.get(TokenQuota).currentPeriod()).toMatch(/^\d{4}-\d{2}$/);
    await app.close();
  });
});
