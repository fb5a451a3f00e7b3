import { Controller, Delete, Get, HttpCode } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CallerContext, type HttpCallerContext, RequireCaller } from '@zmodu/http';
import { InjectMemoryStore, type MemoryStore } from '@zmodu/memory';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequirePermission } from '../auth/require-permission.decorator';

/** The caller's own memory: what the agents remembered about them, and the right to have it all forgotten. */
@ApiTags('memory')
@ApiBearerAuth()
@Controller('memory')
@RequireCaller()
export class MemoryController {
  constructor(@InjectMemoryStore() private readonly store: MemoryStore) {}

  /** The caller's notes (their tenant, their user), newest first. */
  @Get()
  @RequirePermission(PERMISSIONS.agentRun)
  async list(@CallerContext() { tenantId, userId }: HttpCallerContext) {
    const entries = await this.store.list({ tenantId, userId }, { limit: 100 });
    return entries.map((e) => ({ id: e.id, agent: e.agent, kind: e.kind, note: e.content, remembered: e.createdAt.toISOString() }));
  }

  /** Erase all of the caller's notes (a write of theirs that started before cannot land after). */
  @Delete()
  @HttpCode(200)
  @RequirePermission(PERMISSIONS.agentRun)
  async erase(@CallerContext() { tenantId, userId }: HttpCallerContext): Promise<{ erased: number }> {
    return { erased: await this.store.erase({ tenantId, userId }) };
  }
}
