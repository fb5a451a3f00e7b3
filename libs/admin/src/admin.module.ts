import { DynamicModule, Module } from '@nestjs/common';
import { ADMIN_OPTIONS } from './admin.constants';
import { ADMIN_MODULE_OPTIONS, AdminModuleForRootOptions, ConfigurableAdminModule } from './admin.module-definition';
import { AdminModuleOptions, resolveAdminOptions } from './admin.options';

/**
 * Admin HTTP endpoints: the approval queue (GET /admin/approvals, GET /admin/approvals/:id,
 * POST /admin/approvals/:id/approve and /reject; needs PipelineModule) and, with `outbox: true`,
 * the outbox (GET /admin/outbox?status=dead, GET /admin/outbox/:id, POST /admin/outbox/:id/retry), and, with
 * `audit: true`, the audit of the caller's tenant (GET /admin/audit as JSON or CSV, GET /admin/audit/verify), with `agents: true` the agents'
 * policies, reports and counters (GET /admin/agents; needs AgentModule), with `quota: true` the token usage of the
 * caller's tenant (GET /admin/quota), with `skills: true` the skill catalog the caller may see (GET /admin/skills and
 * /admin/skills/openapi.json), and with `config: true` the declared config keys of the caller's tenant (GET /admin/config,
 * PUT /admin/config/:key; needs AdminSkillsModule). Every endpoint carries @nestjs/swagger decorators.
 * `forRoot(options)` or `forRootAsync({ useFactory, inject, outbox?, approvals?, audit?, agents?, quota?, skills?, config? })`.
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
