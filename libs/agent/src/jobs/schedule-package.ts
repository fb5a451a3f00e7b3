import { SCHEDULE_LOAD_FAILED, SCHEDULE_NOT_INSTALLED, SCHEDULE_NOT_REQUIRABLE } from '../agent.messages';
import { SchedulePackageUnavailableException } from '../exceptions/schedule-package-unavailable.exception';

/**
 * What the job scheduler needs of `@nestjs/schedule`'s `SchedulerRegistry` (structural, so that no declaration of
 * ours names the optional package): a job armed on this instance is added under `zmodu:job:<job id>` and deleted when
 * it is disarmed.
 */
export interface CronJobRegistry {
  /** `job` is a `cron` CronJob (typed loosely here, so that no declaration of ours names the optional `cron` either). */
  addCronJob(name: string, job: object): void;
  deleteCronJob(name: string): void;
  doesExist(type: 'cron', name: string): boolean;
  getCronJob(name: string): object;
}

/** The parts of `@nestjs/schedule` zmodu uses: the registry's class (its DI token) and the `@Cron` decorator. */
export interface SchedulePackage {
  readonly SchedulerRegistry: abstract new (...args: never[]) => CronJobRegistry;
  readonly Cron: (cronTime: string, options?: { name?: string; timeZone?: string }) => MethodDecorator;
}

/** The package, required by name (a literal require: a bundler keeps it external, as it keeps @nestjs/common). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const requireSchedule = (): unknown => require('@nestjs/schedule');

/**
 * Load `@nestjs/schedule` (an ES module, loaded from our CommonJS through Node's require of ES modules), or throw
 * SchedulePackageUnavailableException saying what `use` needs and how to get it. `load` requires it (by default from
 * here, where the application's copy resolves: it is a peer dependency).
 */
export function loadSchedulePackage(use: string, load: () => unknown = requireSchedule): SchedulePackage {
  let loaded: unknown;
  try {
    loaded = load();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err?.code === 'MODULE_NOT_FOUND' && String(err.message).includes('@nestjs/schedule'))
      throw new SchedulePackageUnavailableException(use, SCHEDULE_NOT_INSTALLED);
    if (err?.code === 'ERR_REQUIRE_ESM') throw new SchedulePackageUnavailableException(use, SCHEDULE_NOT_REQUIRABLE(process.version));
    throw new SchedulePackageUnavailableException(use, SCHEDULE_LOAD_FAILED(String(err?.message ?? e)));
  }
  const pkg = loaded as Partial<SchedulePackage> | null;
  if (!pkg || typeof pkg.SchedulerRegistry !== 'function' || typeof pkg.Cron !== 'function')
    throw new SchedulePackageUnavailableException(use, SCHEDULE_LOAD_FAILED('it exports no SchedulerRegistry or Cron'));
  return pkg as SchedulePackage;
}
