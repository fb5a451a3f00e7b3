import { DynamicModule, Module } from '@nestjs/common';
import { ADMIN_MODULE_OPTIONS, AdminModuleOptions } from './admin.options';
import { ApprovalsController } from './approvals.controller';

/**
 * Admin HTTP endpoints. For now the approval queue: GET /admin/approvals, GET /admin/approvals/:id,
 * POST /admin/approvals/:id/approve and /reject. Needs PipelineModule.
 */
@Module({})
export class AdminModule {
  static forRoot(options: Partial<AdminModuleOptions> = {}): DynamicModule {
    return {
      module: AdminModule,
      controllers: [ApprovalsController],
      providers: [{ provide: ADMIN_MODULE_OPTIONS, useValue: Object.assign(new AdminModuleOptions(), options) }],
    };
  }
}
