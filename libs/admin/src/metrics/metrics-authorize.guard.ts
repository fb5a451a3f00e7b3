import { CanActivate, ExecutionContext, ForbiddenException, HttpException, Inject, Injectable } from '@nestjs/common';
import { isScopeId } from '@zmodu/core';
import { METRICS_FORBIDDEN_MESSAGE } from '../admin.messages';
import { METRICS_OPTIONS, METRICS_VIEW } from './metrics.constants';
import { MetricsTenantView, ResolvedMetricsOptions } from './metrics.options';

/**
 * The `authorize` option of MetricsModule, on its route: `true` lets the scrape see every series, `{ tenantId }` only
 * that tenant's; false, anything else or a rejection answers 403 (an HttpException keeps its status). Without the
 * option, anyone passes and sees every series. What the scrape may see is put on the request for the controller.
 */
@Injectable()
export class MetricsAuthorizeGuard implements CanActivate {
  constructor(@Inject(METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Record<PropertyKey, unknown>>();
    const authorize = this.options.authorize;
    if (!authorize) {
      request[METRICS_VIEW] = true;
      return true;
    }
    const access: unknown = await Promise.resolve()
      .then(() => authorize(request))
      .catch((err: unknown) => {
        if (err instanceof HttpException) throw err;
        return false;
      });
    if (access === true) request[METRICS_VIEW] = true;
    else if (isTenantView(access)) request[METRICS_VIEW] = Object.freeze({ tenantId: access.tenantId });
    else throw new ForbiddenException(METRICS_FORBIDDEN_MESSAGE);
    return true;
  }
}

/** `{ tenantId }` with an own tenant id that is one (scopeIdProblem's rule); a look-alike object is refused. */
function isTenantView(value: unknown): value is MetricsTenantView {
  return (
    typeof value === 'object' && value !== null && Object.hasOwn(value, 'tenantId') && isScopeId((value as MetricsTenantView).tenantId)
  );
}
