import { createHash, timingSafeEqual } from 'node:crypto';
import { DynamicModule } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { MetricsModule } from '@zmodu/admin';
import { PERMISSIONS } from './auth/auth.constants';
import { Public, RequirePermission } from './auth/require-permission.decorator';
import { SampleAppOptions } from './sample.options';

/**
 * GET /metrics of the sample. Its labels name tenants, agents and skills, so it is never open: with a scrape token
 * (ZMODU_METRICS_TOKEN) the scraper sends `Authorization: Bearer <token>` and needs no JWT (Prometheus cannot mint
 * short-lived JWTs); without, the route needs a JWT carrying admin:metrics, like any other endpoint. Never rate-limited
 * per caller (a scraper comes every few seconds).
 */
export function sampleMetricsModule(options: SampleAppOptions): DynamicModule {
  const token = options.metrics?.token;
  return MetricsModule.forRoot({
    decorators: token ? [Public(), SkipThrottle()] : [RequirePermission(PERMISSIONS.adminMetrics), SkipThrottle()],
    authorize: token ? (request) => bearerIs(request, token) : null,
  });
}

/** Whether the request carries exactly `Authorization: Bearer <token>`; compared in constant time. */
function bearerIs(request: unknown, token: string): boolean {
  const header = (request as { headers?: Record<string, unknown> }).headers?.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(token));
}
