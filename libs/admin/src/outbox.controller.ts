import { Controller, Get, HttpCode, NotFoundException, Param, Post, Query, UseFilters } from '@nestjs/common';
import { OutboxEvent, OutboxPage, OutboxService, OutboxStatus } from '@zmodu/outbox';
import { AdminExceptionFilter } from './admin-exception.filter';
import { AdminCaller } from './admin.options';
import { OptionalIntPipe, OptionalOneOfPipe, ParseIdPipe } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

const STATUSES: readonly OutboxStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

/** The outbox of the caller's tenant: see dead-lettered events and retry them. The permission is the `outboxPermission` option. */
@Controller('admin/outbox')
@RequireAdminPermission('outboxPermission')
@UseFilters(AdminExceptionFilter)
export class OutboxController {
  constructor(private readonly outbox: OutboxService) {}

  @Get()
  list(
    @CurrentCaller() caller: AdminCaller,
    @Query('status', new OptionalOneOfPipe(STATUSES)) status?: OutboxStatus,
    @Query('page', new OptionalIntPipe()) page?: number,
    @Query('limit', new OptionalIntPipe(1, 100)) limit?: number,
  ): Promise<OutboxPage> {
    return this.outbox.list(caller.tenantId, { status, page, limit });
  }

  @Get(':id')
  async get(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<OutboxEvent> {
    const event = await this.outbox.get(caller.tenantId, id);
    if (!event) throw new NotFoundException(`No event ${id}.`);
    return event;
  }

  @Post(':id/retry')
  @HttpCode(200)
  async retry(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<OutboxEvent> {
    const event = await this.outbox.retry(caller.tenantId, id);
    if (!event) throw new NotFoundException(`No event ${id}.`);
    return event;
  }
}
