import { loadOptionalPeer } from '@zmodu/core';

/** The range of `cron` (an optional peer of @zmodu/agent) that the job scheduler is tested with. */
export const CRON_RANGE = '^4.4.0';

/**
 * The `cron` package, an optional peer of @zmodu/agent: the scheduled agent jobs (`jobs` of AgentModule.forRoot,
 * `@AgentJob`, `@AgentCron`, `AgentJobTicks`) read cron expressions and arm timers with it, so an application without
 * jobs does not install it (nor luxon under it). Loaded when a job feature is first used; when it is not installed, an
 * `OptionalPeerUnavailableException` says `npm install cron@^4.4.0` (`@nestjs/schedule` depends on it too).
 */
export function loadCronPackage(feature = 'scheduled agent jobs'): typeof import('cron') {
  // A literal require: a bundler (the sample's webpack) keeps it external.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return loadOptionalPeer('cron', feature, () => require('cron') as typeof import('cron'), { install: `cron@${CRON_RANGE}` });
}
