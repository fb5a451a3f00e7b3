import { loadCronPackage } from './cron-package';

/** A `cron` CronTime (the package loaded on first use: an optional peer). */
function cronTime(cron: string, timeZone: string) {
  return new (loadCronPackage().CronTime)(cron, timeZone);
}

/** Most ticks walked to find the latest missed one (a minutely job down for ~70 days); beyond that, none is run. */
const MAX_TICKS_WALKED = 100_000;

/**
 * Why a cron expression / time zone cannot be a job, or null when it can. Five fields (minute precision), or six with
 * a single literal second: sub-minute schedules are refused.
 */
export function cronProblem(cron: unknown, timeZone: unknown): string | null {
  if (typeof cron !== 'string' || !cron.trim()) return 'cron is required: a cron expression such as "0 9 * * 1-5"';
  if (typeof timeZone !== 'string' || !timeZone.trim()) return 'timeZone is required: an IANA time zone such as "Europe/Paris" or "UTC"';
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    return `cron "${cron}" has ${fields.length} fields; use 5 (minute hour day month weekday), e.g. "0 9 * * 1-5"`;
  if (fields.length === 6 && !/^\d{1,2}$/.test(fields[0]))
    return `cron "${cron}" runs more than once a minute; the shortest interval of a job is one minute (use 5 fields)`;
  const valid = loadCronPackage().CronTime.validateCronExpression(cron);
  if (!valid.valid) return `cron "${cron}" is not a valid expression (${valid.error?.message ?? 'invalid'}); e.g. "0 9 * * 1-5"`;
  try {
    cronTime(cron, timeZone).sendAt();
  } catch (e) {
    return `cron "${cron}" in time zone "${timeZone}" cannot be scheduled (${(e as Error).message}); use an IANA time zone such as "UTC"`;
  }
  return null;
}

/** The first tick strictly after `from`. */
export function nextTick(cron: string, timeZone: string, from: Date): Date {
  return cronTime(cron, timeZone).getNextDateFrom(from, timeZone).toJSDate();
}

/** The latest tick t with from < t <= now, or null (none, or more than MAX_TICKS_WALKED of them). */
export function latestTickBetween(cron: string, timeZone: string, from: Date, now: Date): Date | null {
  const time = cronTime(cron, timeZone);
  let latest: Date | null = null;
  let at = from;
  for (let i = 0; i < MAX_TICKS_WALKED; i++) {
    const next = time.getNextDateFrom(at, timeZone).toJSDate();
    if (next.getTime() > now.getTime()) return latest;
    latest = next;
    at = next;
  }
  return null;
}

/** The windows searched back from `at` for its latest tick: ticks are a minute apart at least, so the first finds most. */
const LOOKBACK_MS = [61_000, 3_600_000, 86_400_000, 32 * 86_400_000, 367 * 86_400_000, 5 * 367 * 86_400_000];

/**
 * The latest tick t <= `at` (null when none in the last five years): the tick a cron timer that fires at `at` fired
 * for. Every instance computes the same instant for one tick, whatever its clock's milliseconds, so it is the key a
 * tick is claimed under.
 */
export function latestTickAtOrBefore(cron: string, timeZone: string, at: Date): Date | null {
  // latestTickBetween takes from < t <= now: start 1 ms before the window so a tick exactly at its start counts.
  for (const ms of LOOKBACK_MS) {
    const tick = latestTickBetween(cron, timeZone, new Date(at.getTime() - ms - 1), at);
    if (tick) return tick;
  }
  return null;
}
