import { ConfigurableModuleBuilder } from '@nestjs/common';
import { AdminModuleExtras, AdminModuleOptions } from './admin.options';
import { AgentsController } from './agents.controller';
import { ApprovalsController } from './approvals.controller';
import { AuditController } from './audit.controller';
import { ConfigController } from './config.controller';
import { ConsoleController } from './console/console.controller';
import { ADMIN_EXTRAS } from './admin.constants';
import { OutboxController } from './outbox.controller';
import { QuotaController } from './quota.controller';
import { SkillsController } from './skills.controller';

const DEFAULT_EXTRAS: Required<AdminModuleExtras> = {
  approvals: true,
  outbox: false,
  audit: false,
  agents: false,
  quota: false,
  skills: false,
  config: false,
  console: false,
};

export const {
  ConfigurableModuleClass: ConfigurableAdminModule,
  MODULE_OPTIONS_TOKEN: ADMIN_MODULE_OPTIONS,
  OPTIONS_TYPE: ADMIN_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ADMIN_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AdminModuleOptions>({ moduleName: 'ZmoduAdmin' })
  .setClassMethodName('forRoot')
  .setExtras<AdminModuleExtras>(DEFAULT_EXTRAS, (definition, extras) => ({
    ...definition,
    controllers: [
      ...(extras.approvals !== false ? [ApprovalsController] : []),
      ...(extras.outbox ? [OutboxController] : []),
      ...(extras.audit ? [AuditController] : []),
      ...(extras.agents ? [AgentsController] : []),
      ...(extras.quota ? [QuotaController] : []),
      ...(extras.skills ? [SkillsController] : []),
      ...(extras.config ? [ConfigController] : []),
      ...(extras.console ? [ConsoleController] : []),
    ],
    providers: [...(definition.providers ?? []), { provide: ADMIN_EXTRAS, useValue: { ...extras } }],
  }))
  .build();

/** What `AdminModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`, and the extras. */
export type AdminModuleAsyncOptions = typeof ADMIN_ASYNC_OPTIONS_TYPE;

/** What `AdminModule.forRoot` takes: the options and the extras. */
export type AdminModuleForRootOptions = typeof ADMIN_OPTIONS_TYPE;
