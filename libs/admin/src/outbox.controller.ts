import {
  BadRequestException,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import { OutboxConflictException, OutboxEvent, OutboxService, OutboxStatus } from '@zmodu/outbox';
import { adminCaller, intParam } from './admin-request';
import { ADMIN_MODULE_OPTIONS, AdminCaller, AdminModuleOptions } from './admin.options';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['pending', 'delivering', 'delivered', 'dead'];

/** The outbox of the caller's tenant: see dead-lettered events and retry them. */
@Controller('admin/outbox')
export class OutboxController {
  constructor(
    private readonly outbox: OutboxService,
    @Inject(ADMIN_MODULE_OPTIONS) private readonly options: AdminModuleOptions,
  ) {}

  @Get()
  list(@Req() req: unknown, @Query('status') status?: string, @Query('page') page?: string, @Query('limit') limit?: string) {
    const caller = this.caller(req);
    if (status !== undefined && !STATUSES.includes(status))
      throw new BadRequestException({ message: `status must be one of ${STATUSES.join(', ')}`, field: 'status' });
    return this.outbox.list(caller.tenantId, {
      status: status as OutboxStatus | undefined,
      page: intParam('page', page),
      limit: intParam('limit', limit, 1, 100),
    });
  }

  @Get(':id')
  async get(@Req() req: unknown, @Param('id') id: string): Promise<OutboxEvent> {
    const caller = this.caller(req);
    const event = await this.outbox.get(caller.tenantId, uuid(id));
    if (!event) throw new NotFoundException(`No event ${id}.`);
    return event;
  }

  @Post(':id/retry')
  @HttpCode(200)
  async retry(@Req() req: unknown, @Param('id') id: string): Promise<OutboxEvent> {
    const caller = this.caller(req);
    try {
      const event = await this.outbox.retry(caller.tenantId, uuid(id));
      if (!event) throw new NotFoundException(`No event ${id}.`);
      return event;
    } catch (err) {
      if (err instanceof OutboxConflictException) throw new ConflictException(err.message);
      throw err;
    }
  }

  private caller(req: unknown): AdminCaller {
    return adminCaller(this.options, req, this.options.outboxPermission ?? 'admin:outbox');
  }
}

function uuid(id: string): string {
  if (!UUID.test(id)) throw new BadRequestException({ message: 'id must be a UUID', field: 'id' });
  return id;
}
