import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '@zmodu/core';
import { safeText } from '../error-text';

/** What the net has seen since the process started. */
export interface UnhandledRejectionCounts {
  /** Rejections that said the database could not be reached: logged and contained (the process goes on). */
  readonly contained: number;
  /** Any other rejection: logged as an error with its stack, then left to Node (or to the application's own listener). */
  readonly raised: number;
}

const logger = new Logger('UnhandledRejectionNet');
const counts = { contained: 0, raised: 0 };
let holders = 0;

function onRejection(reason: unknown): void {
  if (isDatabaseUnavailable(reason)) {
    counts.contained++;
    logger.warn(
      `Contained an unhandled rejection of a lost database connection (${counts.contained} so far; a library did not await a call ` +
        `the outage failed): ${safeText(reason)}`,
    );
    return;
  }
  counts.raised++;
  const stack = reason instanceof Error && reason.stack ? reason.stack : safeText(reason);
  logger.error(`Unhandled rejection (${counts.raised} so far), not a lost database: a bug to fix. ${stack}`);
  // Not ours to hide. Alone on the event, this listener took Node's default away: give it back (the rejection is raised
  // as an uncaught exception, as it would have been without the net). An application listening itself decides.
  if (process.listenerCount('unhandledRejection') === 1)
    process.nextTick(() => {
      throw reason;
    });
}

/**
 * The last resort of cluster mode, installed while a PgBossGoalQueue runs: a process-level `unhandledRejection`
 * listener. Our own calls to pg-boss are awaited and caught where they are made (PgBossGoalQueue); this net is for a
 * promise some library below leaves unawaited when the database goes away (pg-boss 10's `work` loop did so with
 * `complete`/`fail`: one PostgreSQL restart ended the process). pg-boss 12 awaits them and reports failures as `error`
 * events, and the chaos suite's restarts leave the net nothing to contain on it; it stays, because a release of pg-boss,
 * pg or anything else below can bring such a promise back, and one is enough to end every run of the instance. A
 * rejection that says the database cannot be reached is logged and counted, and the process goes on; any other is
 * logged as an error with its stack, counted, and raised as Node would have raised it. Returns the release (the
 * listener is removed when its last holder releases it).
 */
export function holdUnhandledRejectionNet(): () => void {
  if (holders++ === 0) process.on('unhandledRejection', onRejection);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) process.off('unhandledRejection', onRejection);
  };
}

/** The rejections the net has seen in this process (for health details and tests). */
export function unhandledRejectionCounts(): UnhandledRejectionCounts {
  return { ...counts };
}
