import { ServiceUnavailableException } from '@nestjs/common';
import type { AgentRunResult } from '@zmodu/agent';
import { QUOTA_OUTAGE_MESSAGE } from '../http.messages';

/** The answer to a run stopped because its token quota could not be read (the database is away): an outage, told as one. */
export function quotaOutageBody(runId: string, retryAfterSeconds: number) {
  return { statusCode: 503, message: QUOTA_OUTAGE_MESSAGE(retryAfterSeconds), runId };
}

/**
 * A run that stopped with `quota_unavailable`, as the 503 it is (the filter sends it with Retry-After): thrown before
 * anything was sent. Any other result is left to answer.
 */
export function refuseUnreadableQuota(result: AgentRunResult, retryAfterSeconds: number): void {
  if (result.stoppedReason === 'quota_unavailable')
    throw new QuotaOutageException(quotaOutageBody(result.runId, retryAfterSeconds), retryAfterSeconds);
}

/** The 503 of an unreadable quota, carrying its Retry-After for the runs controller. */
export class QuotaOutageException extends ServiceUnavailableException {
  constructor(
    body: ReturnType<typeof quotaOutageBody>,
    readonly retryAfterSeconds: number,
  ) {
    super(body);
    this.name = 'QuotaOutageException';
  }
}
