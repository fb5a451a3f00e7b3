import { DynamicModule, Module } from '@nestjs/common';
import { ADMIN_MODULE_OPTIONS, AdminModuleOptions } from './admin.options';
import { ApprovalsController } from './approvals.controller';
import { OutboxController } from './outbox.controller';

/**
 * Admin HTTP endpoints: the approval queue (GET /admin/approvals, GET /admin/approvals/:id,
 * POST /admin/approvals/:id/approve and /reject; needs PipelineModule) and, with `outbox: true`,
 * the outbox (GET /admin/outbox?status=dead, GET /admin/outbox/:id, POST /admin/outbox/:id/retry).
 */
@Module({})
export class AdminModule {
  static forRoot(options: Partial<AdminModuleOptions> = {}): DynamicModule {
    const merged = Object.assign(new AdminModuleOptions(), options);
    return {
      module: AdminModule,
      controllers: [...(merged.approvals !== false ? [ApprovalsController] : []), ...(merged.outbox ? [OutboxController] : [])],
      providers: [{ provide: ADMIN_MODULE_OPTIONS, useValue: merged }],
    };
  }
}
