/**
 * The terminus types the indicators are written against, declared here (structurally the same as
 * @nestjs/terminus's) so that the declarations of @zmodu/admin name no optional peer: an application without
 * @nestjs/terminus compiles against them, with `skipLibCheck: false` too. terminus's `HealthIndicatorService` is one
 * of these, and what `isHealthy` answers is one of terminus's `HealthIndicatorResult`s.
 */
export type HealthIndicatorStatus = 'up' | 'down';

/** `{ [key]: { status, ...details } }`, as terminus's HealthCheckService gathers them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HealthIndicatorResult<Key extends string = string> = Record<Key, { status: HealthIndicatorStatus } & Record<string, any>>;

/** What the indicators use of terminus's HealthIndicatorService: a session per key that says up or down. */
export interface HealthIndicatorService {
  check<const Key extends string>(
    key: Key,
  ): {
    up(data?: Record<string, unknown>): HealthIndicatorResult<Key>;
    down(data?: Record<string, unknown>): HealthIndicatorResult<Key>;
  };
}
