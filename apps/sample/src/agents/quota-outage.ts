import { ServiceUnavailableException } from '@nestjs/common';
import type { AgentRunResult } from '@zmodu/agent';
import type { Response } from 'express';
import { DATABASE_RETRY_AFTER_SECONDS } from '../edge/edge-exception.filter';

/** The answer to a run stopped because its token quota could not be read (the database is away): an outage, told as one. */
export function quotaOutageBody(runId: string) {
  return {
    statusCode: 503,
    message: `The token quota cannot be read (the database is unavailable): retry in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`,
    runId,
  };
}

/** Throws the 503 (with Retry-After) when the run stopped on an unreadable quota. */
export function refuseUnreadableQuota(result: AgentRunResult, res: Response): void {
  if (result.stoppedReason !== 'quota_unavailable') return;
  res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
  throw new ServiceUnavailableException(quotaOutageBody(result.runId));
}
