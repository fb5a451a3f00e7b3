import { INestApplication } from '@nestjs/common';
import { securityHeaders } from './edge/security-headers.middleware';
import { serveOpenApi } from './openapi';

/** What serveHttp serves beside AppModule's routes. */
export interface SampleHttpOptions {
  /** GET /docs (Swagger UI) and /docs-json: the OpenAPI document (see docsFromEnv: off outside development unless asked). */
  readonly docs: boolean;
}

/**
 * The sample's HTTP server around AppModule: call it before `app.init()` or `app.listen()` (main.ts and the e2e tests
 * do). It turns Express's `X-Powered-By` off and puts the security headers (securityHeaders: helmet's, `no-store`)
 * first of all, before anything answers: so the routes served outside Nest's pipeline get them like every other
 * answer (the OpenAPI UI and JSON, which @nestjs/swagger mounts on Express directly, and the JSON body parser's 400 and
 * 413, which answer before any Nest middleware runs). Then the OpenAPI routes, when `docs`.
 */
export function serveHttp(app: INestApplication, options: SampleHttpOptions): void {
  (app.getHttpAdapter().getInstance() as { disable(setting: string): unknown }).disable('x-powered-by');
  app.use(securityHeaders());
  if (options.docs) serveOpenApi(app);
}
