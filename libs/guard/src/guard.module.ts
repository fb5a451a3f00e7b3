import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentAuditLog } from './audit/agent-audit-log';
import { AuditLogStore } from './audit/audit-log.store';
import { InMemoryAuditLogStore } from './audit/in-memory-audit-log.store';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { InvalidGuardOptionsException } from './exceptions/invalid-guard-options.exception';
import { RuntimeEvents } from './events/runtime-events';
import { AUDIT_LOG_STORE, TOKEN_QUOTA_STORE } from './guard.constants';
import { ConfigurableGuardModule, GUARD_MODULE_OPTIONS, GUARD_OPTIONS_TYPE, RESOLVED_GUARD_OPTIONS } from './guard.module-definition';
import { GuardModuleOptions } from './guard-module.options';
import { ownOptions, resolveStoreChoice } from '@zmodu/core';
import { InMemoryTokenQuotaStore } from './quota/in-memory-token-quota.store';
import { TokenQuota } from './quota/token-quota';
import { TokenQuotaStore } from './quota/token-quota.store';
import { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
import { Redactor } from './redaction/redactor';

/** The provider of one of the guard's two stores, picked by its StoreChoice option (`auditStore` or `quotaStore`). */
function storeProvider<T>(
  token: symbol,
  field: 'auditStore' | 'quotaStore',
  port: { keeps: string; methods: readonly string[]; typeorm: (ds: DataSource) => T; memory: () => T },
): Provider {
  return {
    provide: token,
    inject: [RESOLVED_GUARD_OPTIONS, { token: getDataSourceToken(), optional: true }],
    useFactory: (options: GuardModuleOptions, dataSource?: DataSource): T =>
      resolveStoreChoice<T, DataSource>({
        ...port,
        choice: options[field],
        option: `The guard option ${field} (GuardModule.forRoot, or AgentModule.forRoot({ guard }))`,
        dataSource,
        invalid: (problem) => new InvalidGuardOptionsException(`Invalid guard options: ${field}: ${problem}`),
      }),
  };
}

const storeProviders: Provider[] = [
  {
    provide: RESOLVED_GUARD_OPTIONS,
    inject: [GUARD_MODULE_OPTIONS],
    useFactory: (raw: Partial<GuardModuleOptions> | undefined): GuardModuleOptions =>
      Object.assign(new GuardModuleOptions(), ownOptions(raw)),
  },
  storeProvider<AuditLogStore>(AUDIT_LOG_STORE, 'auditStore', {
    keeps: 'the audit log',
    methods: ['append', 'query'],
    typeorm: (ds) => new TypeOrmAuditLogStore(ds),
    memory: () => new InMemoryAuditLogStore(),
  }),
  storeProvider<TokenQuotaStore>(TOKEN_QUOTA_STORE, 'quotaStore', {
    keeps: 'the token quota',
    methods: ['used', 'charge'],
    typeorm: (ds) => new TypeOrmTokenQuotaStore(ds),
    memory: () => new InMemoryTokenQuotaStore(),
  }),
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
