import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { METRICS_FORBIDDEN_MESSAGE } from '../admin.messages';
import { METRICS_OPTIONS } from './metrics.constants';
import { ResolvedMetricsOptions } from './metrics.options';

/** The `authorize` option of MetricsModule, on its route: false or a rejection answers 403; without the option, anyone passes. */
@Injectable()
export class MetricsAuthorizeGuard implements CanActivate {
  constructor(@Inject(METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const authorize = this.options.authorize;
    if (!authorize) return true;
    const allowed = await Promise.resolve()
      .then(() => authorize(context.switchToHttp().getRequest()))
      .catch(() => false);
    if (allowed !== true) throw new ForbiddenException(METRICS_FORBIDDEN_MESSAGE);
    return true;
  }
}
