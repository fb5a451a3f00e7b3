import { INestApplication } from '@nestjs/common';
import type * as Swagger from '@nestjs/swagger';
import { loadOptionalPeer } from '@zmodu/guard';

/** Where the sample serves its OpenAPI document: the UI at /docs, the JSON at /docs-json (and YAML at /docs-yaml). */
export const DOCS_PATH = 'docs';
export const DOCS_JSON_PATH = 'docs-json';

/**
 * Serve the OpenAPI document of the whole HTTP API (the sample's controllers, the admin API, MCP), built by
 * @nestjs/swagger from the controllers' decorators on its first request. serveHttp calls it (when its `docs` says so)
 * after the security headers, before `app.init()`: its routes must come before Nest's 404 handler. The document is
 * public, like /health: it describes the API, not anyone's data; every operation but /health needs a bearer token.
 * @nestjs/swagger is loaded here, at boot, only when the document is asked for: without it, the boot fails naming it.
 */
export function serveOpenApi(app: INestApplication): void {
  const { DocumentBuilder, SwaggerModule } = loadOptionalPeer(
    '@nestjs/swagger',
    'the OpenAPI document and Swagger UI (ZMODU_DOCS=1, ZMODU_DEV=1)',
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    () => require('@nestjs/swagger') as typeof Swagger,
    { install: '@nestjs/swagger@^12 (with Nest 11: @nestjs/swagger@^11.4.7)' },
  );
  const config = new DocumentBuilder()
    .setTitle('zmodu sample: trading assistant')
    .setDescription('Guarded AI agents over trading skills, the approval queue and the admin API. Mint a token with `npm run token`.')
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An HS256 token (npm run token)' })
    .build();
  SwaggerModule.setup(DOCS_PATH, app, () => SwaggerModule.createDocument(app, config), { jsonDocumentUrl: DOCS_JSON_PATH });
}
