import { createHash, timingSafeEqual } from 'node:crypto';
import { DynamicModule, ForbiddenException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { SkipThrottle } from '@nestjs/throttler';
import { MetricsAccess, MetricsModule } from '@zmodu/admin';
import { PERMISSIONS } from './auth/auth.constants';
import { authenticateBearer } from './auth/jwt-auth.guard';
import { jwtModuleOptions } from './auth/jwt-options';
import { Public } from './auth/require-permission.decorator';
import { edgeOptions } from './edge/edge.options';
import { SampleAppOptions } from './sample.options';

/**
 * GET /metrics of the sample. Its `tenant` labels name tenants, so it is never open, and what a scrape sees depends on
 * who sends it: the scrape token (ZMODU_METRICS_TOKEN, `Authorization: Bearer <token>`, what Prometheus sends; it
 * needs no JWT, as Prometheus cannot mint short-lived JWTs) is the platform credential and sees every series; a JWT
 * carrying admin:metrics sees only its tenant's own series (`tenant="<its tenant>"`), never another tenant's names or
 * usage nor the series summed over every tenant. Anything else: 401 (no or a bad token) or 403 (no admin:metrics).
 * Never rate-limited per caller (a scraper comes every few seconds).
 */
export function sampleMetricsModule(options: SampleAppOptions): DynamicModule {
  const token = options.metrics?.token;
  const jwt = new JwtService(jwtModuleOptions(options.jwtSecret));
  const edge = edgeOptions(options.edge);
  return MetricsModule.forRoot({
    // The route reads its credentials itself (the scrape token is not a JWT): JwtAuthGuard lets it through.
    decorators: [Public(), SkipThrottle()],
    authorize: async (request): Promise<MetricsAccess> => {
      const header = (request as { headers?: Record<string, unknown> }).headers?.authorization;
      const bearer = typeof header === 'string' ? header : undefined;
      if (token && bearer !== undefined && bearerIs(bearer, token)) return true;
      const caller = await authenticateBearer(jwt, edge, bearer);
      if (!caller.permissions.includes(PERMISSIONS.adminMetrics))
        throw new ForbiddenException(`Missing permission: ${PERMISSIONS.adminMetrics}. Ask for a token that carries it.`);
      return { tenantId: caller.tenantId };
    },
  });
}

/** Whether the header is exactly `Bearer <token>`; compared in constant time. */
function bearerIs(header: string, token: string): boolean {
  if (!header.startsWith('Bearer ')) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(token));
}
