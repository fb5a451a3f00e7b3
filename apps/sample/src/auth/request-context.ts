import { Injectable, UnauthorizedException } from '@nestjs/common';
import type { AgentRunContext } from '@zmodu/agent';
import { ClsService } from 'nestjs-cls';
import { Caller, CLS_CALLER } from './auth.constants';

/** The request's caller, as the agent runtime wants it. */
@Injectable()
export class RequestContext {
  constructor(private readonly cls: ClsService) {}

  caller(): Caller {
    const caller = this.cls.get<Caller | undefined>(CLS_CALLER);
    if (!caller) throw new UnauthorizedException('No authenticated caller in the request context.');
    return caller;
  }

  /** Tenant, user and permissions from the token; the run id is the request id (x-request-id or a new UUID). */
  runContext(): AgentRunContext {
    const caller = this.caller();
    return { tenantId: caller.tenantId, userId: caller.userId, permissions: caller.permissions, runId: this.cls.getId() };
  }
}
