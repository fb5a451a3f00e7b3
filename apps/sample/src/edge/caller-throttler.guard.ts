import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Caller } from '../auth/auth.constants';

/**
 * The rate limit per caller: keyed on the token's tenant and subject (set by JwtAuthGuard,
 * which runs first), not on the IP, so callers behind one proxy do not share a budget. Past the
 * limit: 429 with Retry-After (seconds). A request without a caller (a public route) is keyed on its IP.
 */
@Injectable()
export class CallerThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const caller = req.user as Caller | undefined;
    return caller ? `caller:${JSON.stringify([caller.tenantId, caller.userId])}` : `ip:${String(req.ip)}`;
  }

  protected override async getErrorMessage(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<string> {
    return `Too many requests: at most ${detail.limit} per ${Math.round(detail.ttl / 1000)} s per caller. Retry after ${detail.timeToBlockExpire} s.`;
  }
}
