import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { ClsService } from 'nestjs-cls';
import { Observable } from 'rxjs';

/** Echoes the request id (the run id of an agent run started by the request) as x-request-id. */
@Injectable()
export class RequestIdInterceptor implements NestInterceptor {
  constructor(private readonly cls: ClsService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<Response>();
    const id = this.cls.getId();
    if (id && typeof response?.setHeader === 'function') response.setHeader('x-request-id', id);
    return next.handle();
  }
}
