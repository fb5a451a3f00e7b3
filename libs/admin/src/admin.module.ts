import { DynamicModule, Module } from '@nestjs/common';
import { ADMIN_OPTIONS } from './admin.constants';
import { ADMIN_MODULE_OPTIONS, AdminModuleForRootOptions, ConfigurableAdminModule } from './admin.module-definition';
import { AdminModuleOptions, resolveAdminOptions } from './admin.options';

/**
 * Admin HTTP endpoints: the approval queue (GET /admin/approvals, GET /admin/approvals/:id,
 * POST /admin/approvals/:id/approve and /reject; needs PipelineModule) and, with `outbox: true`,
 * the outbox (GET /admin/outbox?status=dead, GET /admin/outbox/:id, POST /admin/outbox/:id/retry), and, with
 * `audit: true`, the audit hash chain of the caller's tenant (GET /admin/audit/verify), and, with `config: true`, the
 * declared config keys of the caller's tenant (GET /admin/config, PUT /admin/config/:key; needs AdminSkillsModule).
 * `forRoot(options)` or `forRootAsync({ useFactory, inject, outbox?, approvals?, audit?, config? })`.
 */
@Module({
  providers: [
    { provide: ADMIN_OPTIONS, inject: [ADMIN_MODULE_OPTIONS], useFactory: (raw: AdminModuleOptions) => resolveAdminOptions(raw) },
  ],
})
export class AdminModule extends ConfigurableAdminModule {
  /** The options may be left out: every one has a default. */
  static override forRoot(options: AdminModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
