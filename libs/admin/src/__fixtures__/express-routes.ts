import { INestApplication } from '@nestjs/common';

interface Layer {
  readonly route?: { readonly path: string; readonly methods: Record<string, boolean> };
}

/** The routes an initialized Nest application on Express serves under `prefix`, as OpenAPI paths: 'get /admin/approvals/{id}'. */
export function servedRoutes(app: INestApplication, prefix: string): string[] {
  const stack = (app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } }).router.stack;
  const routes = new Set<string>();
  for (const layer of stack) {
    if (!layer.route?.path.startsWith(prefix)) continue;
    for (const method of Object.keys(layer.route.methods)) routes.add(`${method} ${layer.route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
  }
  return [...routes].sort();
}
