import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentAuditLog } from './audit/agent-audit-log';
import { AuditLogStore } from './audit/audit-log.store';
import { InMemoryAuditLogStore } from './audit/in-memory-audit-log.store';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { MissingDataSourceException } from './exceptions/missing-data-source.exception';
import { RuntimeEvents } from './events/runtime-events';
import { AUDIT_LOG_STORE, TOKEN_QUOTA_STORE } from './guard.constants';
import { ConfigurableGuardModule, GUARD_MODULE_OPTIONS, GUARD_OPTIONS_TYPE, RESOLVED_GUARD_OPTIONS } from './guard.module-definition';
import { GuardModuleOptions, StoreChoice } from './guard-module.options';
import { ownOptions } from '@zmodu/core';
import { InMemoryTokenQuotaStore } from './quota/in-memory-token-quota.store';
import { TokenQuota } from './quota/token-quota';
import { TokenQuotaStore } from './quota/token-quota.store';
import { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
import { Redactor } from './redaction/redactor';

function requireDataSource(dataSource: DataSource | null | undefined): DataSource {
  if (dataSource) return dataSource;
  throw new MissingDataSourceException();
}

function resolveStore<T>(choice: StoreChoice<T> | undefined, memory: () => T, typeorm: () => T): T {
  if (choice === 'memory') return memory();
  if (choice === undefined || choice === 'typeorm') return typeorm();
  return choice;
}

const storeProviders: Provider[] = [
  {
    provide: RESOLVED_GUARD_OPTIONS,
    inject: [GUARD_MODULE_OPTIONS],
    useFactory: (raw: Partial<GuardModuleOptions> | undefined): GuardModuleOptions =>
      Object.assign(new GuardModuleOptions(), ownOptions(raw)),
  },
  {
    provide: AUDIT_LOG_STORE,
    inject: [RESOLVED_GUARD_OPTIONS, { token: getDataSourceToken(), optional: true }],
    useFactory: (options: GuardModuleOptions, dataSource?: DataSource): AuditLogStore => {
      return resolveStore<AuditLogStore>(
        options.auditStore,
        () => new InMemoryAuditLogStore(),
        () => new TypeOrmAuditLogStore(requireDataSource(dataSource)),
      );
    },
  },
  {
    provide: TOKEN_QUOTA_STORE,
    inject: [RESOLVED_GUARD_OPTIONS, { token: getDataSourceToken(), optional: true }],
    useFactory: (options: GuardModuleOptions, dataSource?: DataSource): TokenQuotaStore => {
      return resolveStore<TokenQuotaStore>(
        options.quotaStore,
        () => new InMemoryTokenQuotaStore(),
        () => new TypeOrmTokenQuotaStore(requireDataSource(dataSource)),
      );
    },
  },
  // One per application: the audit log, the quota, the agents and the pipeline emit here; metrics subscribe.
  { provide: RuntimeEvents, useFactory: () => new RuntimeEvents() },
  {
    provide: AgentAuditLog,
    inject: [AUDIT_LOG_STORE, RESOLVED_GUARD_OPTIONS, RuntimeEvents],
    useFactory: (store: AuditLogStore, options: GuardModuleOptions, events: RuntimeEvents) =>
      new AgentAuditLog(store, options.audit, events),
  },
  {
    provide: TokenQuota,
    inject: [TOKEN_QUOTA_STORE, RESOLVED_GUARD_OPTIONS, RuntimeEvents],
    useFactory: (store: TokenQuotaStore, options: GuardModuleOptions, events: RuntimeEvents) =>
      new TokenQuota(store, options.quota, undefined, events),
  },
  {
    // Built at boot: bad redaction options fail the boot, naming the field.
    provide: Redactor,
    inject: [RESOLVED_GUARD_OPTIONS],
    useFactory: (options: GuardModuleOptions) => new Redactor(options.redaction),
  },
];

/**
 * At shutdown (enableShutdownHooks, or app.close()): writes the queued token charges and flushes
 * the audit log, each trying to the end; an audit flush that still fails is thrown after both ran.
 */
@Injectable()
class GuardShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(AgentAuditLog) private readonly audit: AgentAuditLog,
    @Inject(TokenQuota) private readonly quota: TokenQuota,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    const [, audit] = await Promise.allSettled([this.quota.close(), this.audit.close()]);
    if (audit.status === 'rejected') throw audit.reason;
  }
}

/**
 * The guard's stores: `AgentAuditLog` and `TokenQuota`, global by default.
 * `AgentModule.forRoot` imports it for you; import it yourself to dispatch skills without agents.
 */
@Module({
  providers: [...storeProviders, GuardShutdown],
  exports: [AgentAuditLog, TokenQuota, Redactor, RuntimeEvents, AUDIT_LOG_STORE, TOKEN_QUOTA_STORE],
})
export class GuardModule extends ConfigurableGuardModule {
  /** `GuardModule.forRoot()` takes the defaults (TypeORM stores, global); see GuardModuleOptions. */
  static forRoot(options: typeof GUARD_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
