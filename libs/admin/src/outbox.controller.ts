import { Controller, Get, HttpCode, NotFoundException, Param, Post, Query, UseFilters } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from './swagger-decorators';
import { OutboxEvent, OutboxPage, OutboxService, OutboxStatus } from '@zmodu/outbox';
import { AdminExceptionFilter } from './admin-exception.filter';
import { ApiFieldError, ApiPageQuery, HTTP_ERROR_SCHEMA, OUTBOX_EVENT_SCHEMA, OUTBOX_PAGE_SCHEMA } from './admin.openapi';
import { AdminCaller } from './admin.options';
import { OptionalIntPipe, OptionalOneOfPipe, ParseIdPipe } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

const STATUSES: readonly OutboxStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

/** The outbox of the caller's tenant: see dead-lettered events and retry them. The permission is the `outboxPermission` option. */
@ApiTags('admin: outbox')
@Controller('admin/outbox')
@RequireAdminPermission('outboxPermission')
@UseFilters(AdminExceptionFilter)
export class OutboxController {
  constructor(private readonly outbox: OutboxService) {}

  @Get()
  @ApiOperation({ summary: "The outbox events of the caller's tenant (e.g. ?status=dead: the dead letters)" })
  @ApiQuery({ name: 'status', required: false, schema: { type: 'string', enum: [...STATUSES] } })
  @ApiPageQuery()
  @ApiOkResponse({ schema: OUTBOX_PAGE_SCHEMA })
  @ApiFieldError()
  list(
    @CurrentCaller() caller: AdminCaller,
    @Query('status', new OptionalOneOfPipe(STATUSES)) status?: OutboxStatus,
    @Query('page', new OptionalIntPipe()) page?: number,
    @Query('limit', new OptionalIntPipe(1, 100)) limit?: number,
  ): Promise<OutboxPage> {
    return this.outbox.list(caller.tenantId, { status, page, limit });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One outbox event' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such event in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  @ApiOkResponse({ schema: OUTBOX_EVENT_SCHEMA })
  async get(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<OutboxEvent> {
    const event = await this.outbox.get(caller.tenantId, id);
    if (!event) throw new NotFoundException(`No event ${id}.`);
    return event;
  }

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'Retry a dead-lettered event: it is pending again' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such event in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  @ApiOkResponse({ description: 'The event, pending again', schema: OUTBOX_EVENT_SCHEMA })
  @ApiConflictResponse({ description: 'The event is not dead', schema: HTTP_ERROR_SCHEMA })
  async retry(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<OutboxEvent> {
    const event = await this.outbox.retry(caller.tenantId, id);
    if (!event) throw new NotFoundException(`No event ${id}.`);
    return event;
  }
}
