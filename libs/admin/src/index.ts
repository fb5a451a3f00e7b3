// The public API of @zmodu/admin. Anything not named here is internal.
export { AdminModule } from './admin.module';
export type { AdminModuleAsyncOptions, AdminModuleForRootOptions } from './admin.module-definition';
export { AdminModuleOptions, callerFromRequestUser } from './admin.options';
export type { AdminCaller, AdminModuleExtras, AdminPermissionOption } from './admin.options';
export { ADMIN_MAPPED_EXCEPTIONS, AdminExceptionFilter, adminHttpException } from './admin-exception.filter';
export { AdminPermissionGuard } from './admin-permission.guard';
export { RequireAdminPermission } from './require-admin-permission.decorator';
export { CurrentCaller } from './current-caller.decorator';
export { CallerNotCheckedException } from './exceptions/caller-not-checked.exception';
export { MetricsModule } from './metrics/metrics.module';
export type { MetricsModuleAsyncOptions, MetricsModuleForRootOptions } from './metrics/metrics.module-definition';
export {
  DEFAULT_MAX_TENANT_LABELS,
  DEFAULT_RUN_DURATION_BUCKETS,
  MetricsModuleOptions,
  OVERFLOW_TENANT_LABEL,
  UNKNOWN_SKILL_LABEL,
} from './metrics/metrics.options';
export type { MetricsModuleExtras } from './metrics/metrics.options';
export { ZmoduMetrics } from './metrics/zmodu-metrics';
export { InvalidMetricsOptionsException } from './exceptions/invalid-metrics-options.exception';
export { ZmoduHealthModule } from './health/health.module';
export { OutboxHealthIndicator } from './health/outbox.health';
export type { OutboxHealthLimits } from './health/outbox.health';
export { GoalQueueHealthIndicator } from './health/goal-queue.health';
export type { ProbedGoalQueue } from './health/goal-queue.health';
