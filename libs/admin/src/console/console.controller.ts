import {
  Controller,
  Get,
  Header,
  Inject,
  Logger,
  NotFoundException,
  Param,
  Req,
  Res,
  ServiceUnavailableException,
  SetMetadata,
  StreamableFile,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '../swagger-decorators';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { checkedCaller } from '../admin-permission.guard';
import { ADMIN_EXTRAS, ADMIN_OPTIONS, ADMIN_PUBLIC_ROUTE } from '../admin.constants';
import { CONSOLE_NOT_BUILT_MESSAGE } from '../admin.messages';
import { HTTP_ERROR_SCHEMA } from '../admin.openapi';
import { AdminModuleExtras, ResolvedAdminOptions } from '../admin.options';
import { AdminConsoleOptions, CONSOLE_TOKEN_HANDOFF_KEY, ResolvedConsoleOptions, resolveConsoleOptions } from './console.options';
import type { ConsoleConfig, ConsoleSession } from './console.types';

/** Answers of the console's own files: nothing but this origin, never framed, never a referrer. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES = new Map<string, string>([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.ico', 'image/x-icon'],
  ['.woff2', 'font/woff2'],
  ['.json', 'application/json'],
  ['.txt', 'text/plain; charset=utf-8'],
]);

interface ConsoleFile {
  readonly body: Buffer;
  readonly type: string;
}

const publicRoute = () => SetMetadata(ADMIN_PUBLIC_ROUTE, true);

/** What the console reads of a request (express's, structurally: the published declarations need no @types/express). */
interface ConsoleRequest {
  readonly originalUrl?: string;
  readonly url: string;
}

/** What the console does with a response (express's, structurally). */
interface ConsoleResponse {
  redirect(status: number, url: string): void;
  setHeader(name: string, value: string): unknown;
}

/**
 * The approvals console (`AdminModule.forRoot({ console: true })`): its built files at /admin/console (public: they
 * hold no data; every answer they show comes from the admin API with the signed-in user's bearer token), its settings
 * at /admin/console/config.json and the signed-in user at /admin/console/session. The files are read once, at boot,
 * and served only by name (no path from the request reaches the file system).
 */
@ApiTags('admin: console')
@Controller('admin/console')
export class ConsoleController {
  private readonly logger = new Logger('AdminConsole');
  private readonly options: ResolvedConsoleOptions;
  private readonly index: ConsoleFile | null = null;
  private readonly assets = new Map<string, ConsoleFile>();

  constructor(
    @Inject(ADMIN_OPTIONS) private readonly admin: ResolvedAdminOptions,
    @Inject(ADMIN_EXTRAS) private readonly extras: AdminModuleExtras,
  ) {
    const given = typeof extras.console === 'object' && extras.console !== null ? (extras.console as AdminConsoleOptions) : undefined;
    this.options = resolveConsoleOptions(given);
    if (!this.options.root) {
      this.logger.warn(CONSOLE_NOT_BUILT_MESSAGE);
      return;
    }
    this.index = { body: readFileSync(join(this.options.root, 'index.html')), type: TYPES.get('.html') as string };
    const assetsDir = join(this.options.root, 'assets');
    let names: string[] = [];
    try {
      names = readdirSync(assetsDir, { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name);
    } catch {
      names = [];
    }
    for (const name of names) {
      const type = TYPES.get(extname(name).toLowerCase());
      if (type) this.assets.set(name, { body: readFileSync(join(assetsDir, name)), type });
    }
  }

  @Get()
  @publicRoute()
  @ApiOperation({ summary: 'The approvals console (a web page; public: its data comes from the admin API with your token)' })
  @ApiOkResponse({ description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } })
  @Header('Content-Security-Policy', CONSOLE_CSP)
  @Header('Cache-Control', 'no-store')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('X-Frame-Options', 'DENY')
  page(@Req() req: ConsoleRequest, @Res({ passthrough: true }) res: ConsoleResponse): StreamableFile | undefined {
    // The page's files are relative to it (./assets/...): /admin/console is redirected to /admin/console/.
    const [path, query] = splitUrl(req.originalUrl ?? req.url);
    if (!path.endsWith('/')) {
      res.redirect(308, `${path}/${query}`);
      return undefined;
    }
    if (!this.index) throw new ServiceUnavailableException(CONSOLE_NOT_BUILT_MESSAGE);
    return new StreamableFile(this.index.body, { type: this.index.type, length: this.index.body.length });
  }

  @Get('config.json')
  @publicRoute()
  @ApiOperation({ summary: "The console's settings: title, login page, polling interval, where the admin API is" })
  @Header('Cache-Control', 'no-store')
  config(@Req() req: ConsoleRequest): ConsoleConfig {
    const [path] = splitUrl(req.originalUrl ?? req.url);
    const apiBase = path.replace(/\/console\/config\.json\/?$/i, '') || '/admin';
    return {
      title: this.options.title,
      loginUrl: this.options.loginUrl,
      pollIntervalMs: this.options.pollIntervalMs,
      apiBase,
      tokenHandoffKey: CONSOLE_TOKEN_HANDOFF_KEY,
      features: { audit: this.extras.audit === true, agents: this.extras.agents === true },
    };
  }

  @Get('session')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Who the bearer token is: tenant, user and permissions, and the permissions the console needs' })
  @ApiUnauthorizedResponse({ description: 'No authenticated caller with a tenant', schema: HTTP_ERROR_SCHEMA })
  @Header('Cache-Control', 'no-store')
  session(@Req() req: ConsoleRequest): ConsoleSession {
    const caller = checkedCaller(this.admin.resolveCaller(req));
    return {
      tenantId: caller.tenantId,
      userId: caller.userId,
      permissions: caller.permissions.filter((p): p is string => typeof p === 'string'),
      decidePermission: this.admin.decidePermission,
      auditPermission: this.admin.auditPermission,
      agentsPermission: this.admin.agentsPermission,
    };
  }

  @Get('assets/:file')
  @publicRoute()
  @ApiOperation({ summary: "The console's built files (scripts, styles), by name" })
  @Header('X-Content-Type-Options', 'nosniff')
  asset(@Param('file') file: string, @Res({ passthrough: true }) res: ConsoleResponse): StreamableFile {
    const found = this.assets.get(file);
    // A name this build does not have (the next release's, during a deployment) is not cached; a file of it is, for good.
    res.setHeader('Cache-Control', found ? 'public, max-age=31536000, immutable' : 'no-store');
    if (!found) throw new NotFoundException('No such file of the console.');
    return new StreamableFile(found.body, { type: found.type, length: found.body.length });
  }
}

/**
 * The path and query of the request. Only the path: a request target in absolute form (`GET http://other.example/admin/console`,
 * which Node accepts and Express routes by its path) must not put another origin in a redirect or in the apiBase.
 */
function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  const [target, query] = q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)];
  const path = target.startsWith('/') ? target : target.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/, '');
  // One leading slash: never `//host/...`, which a browser reads as another origin.
  return [`/${path.replace(/^[/\\]+/, '')}`, query];
}
