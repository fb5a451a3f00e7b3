import { createServer, type AddressInfo } from 'node:net';
import { CanActivate, ExecutionContext, Injectable, INestApplication, UnauthorizedException } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { GuardModule, GuardPolicy } from '@zmodu/guard';
import { Skill, SkillInvocation, SkillsModule } from '@zmodu/skills';
import type { Request } from 'express';
import { McpModule, McpModuleOptions, McpPrincipal } from '../index';

/** The callers of the fixture, by bearer token (the fixture's stand-in for the application's authentication). */
export const TOKENS: Readonly<Record<string, McpPrincipal>> = Object.freeze({
  'alice-token': { tenantId: 'acme', userId: 'alice', permissions: ['market:read', 'order:draft', 'order:cancel'] },
  'alice-readonly-token': { tenantId: 'acme', userId: 'alice', permissions: ['market:read'] },
  'bob-token': { tenantId: 'acme', userId: 'bob', permissions: ['market:read'] },
  'gina-token': { tenantId: 'globex', userId: 'gina', permissions: ['market:read', 'order:draft', 'order:cancel'] },
  // Tokens with an audience (the "aud" claim the app's verification read): for the endpoint, and for another service.
  'alice-mcp-token': { tenantId: 'acme', userId: 'alice', permissions: ['market:read'], audience: ['https://MCP.example.com/mcp/'] },
  'alice-crm-token': { tenantId: 'acme', userId: 'alice', permissions: ['market:read'], audience: ['https://crm.example.com/api'] },
});

/** Notes per tenant: what a tenant-scoped skill may see. */
export const NOTES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  acme: ['acme: buy low'],
  globex: ['globex: secret plan'],
});

/** Sets req.user from `Authorization: Bearer <token>`; no header lets the request through without a caller. */
@Injectable()
export class FixtureAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request & { user?: McpPrincipal }>();
    const header = req.headers.authorization;
    if (header === undefined) return true;
    const token = /^Bearer (\S+)$/.exec(header)?.[1];
    if (!token || !Object.hasOwn(TOKENS, token)) throw new UnauthorizedException('unknown token');
    req.user = TOKENS[token];
    return true;
  }
}

const ORDER = {
  type: 'object',
  properties: { symbol: { type: 'string', pattern: '^[A-Z]{1,6}$' }, qty: { type: 'integer', minimum: 1 } },
  required: ['symbol', 'qty'],
  additionalProperties: false,
};

/** One skill of each kind the MCP bridge must tell apart. */
@Injectable()
export class FixtureSkills {
  @Skill({ name: 'desk.whoami', action: 'read', description: 'The caller, as the skill sees it' })
  whoami(_args: unknown, ctx: SkillInvocation) {
    return { tenantId: ctx.tenantId, userId: ctx.userId };
  }

  @Skill({ name: 'notes.list', action: 'read', description: "The caller tenant's notes", requiredPermission: 'market:read' })
  notes(_args: unknown, ctx: SkillInvocation) {
    return { tenantId: ctx.tenantId, notes: Object.hasOwn(NOTES, ctx.tenantId!) ? NOTES[ctx.tenantId!] : [] };
  }

  @Skill({ name: 'order.quote', action: 'read', description: 'Price an order', requiredPermission: 'market:read', parameters: ORDER })
  quote(args: { symbol: string; qty: number }) {
    return { symbol: args.symbol, qty: args.qty, amount: args.qty * 100 };
  }

  @Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order', requiredPermission: 'order:draft', parameters: ORDER })
  draft(args: { symbol: string; qty: number }) {
    return { drafted: true, ...args };
  }

  @Skill({ name: 'order.cancel', action: 'execute', description: 'Cancel an order', requiredPermission: 'order:cancel' })
  cancel() {
    return { cancelled: true };
  }

  @Skill({ name: 'order.submit', action: 'execute', staged: true, description: 'Submit an order (staged)', parameters: ORDER })
  submit() {
    return { submitted: true };
  }

  @Skill({ name: 'admin.secret', action: 'read', description: 'Not on the allow list' })
  secret() {
    return { secret: 42 };
  }

  @Skill({ name: 'ops.purge', action: 'read', description: 'On the deny list' })
  purge() {
    return { purged: true };
  }
}

/** The fixture's MCP policy: read and propose skills, the execute one listed but the class closed, one denied. */
export const FIXTURE_POLICY: GuardPolicy = {
  allow: ['desk.whoami', 'notes.list', 'order.quote', 'order.draft', 'order.cancel', 'order.submit', 'ops.purge'],
  deny: ['ops.purge'],
  allowExecute: false,
};

export interface FixtureApp {
  readonly app: INestApplication;
  readonly url: URL;
  close(): Promise<void>;
}

/** A Nest app with the fixture skills and McpModule at /mcp behind FixtureAuthGuard, listening on a free port. */
export async function startFixtureApp(
  mcp: { forRoot: Partial<McpModuleOptions> } | { forRootAsync: () => Partial<McpModuleOptions> } = { forRoot: {} },
  port = 0,
): Promise<FixtureApp> {
  const mcpModule =
    'forRoot' in mcp
      ? McpModule.forRoot({ path: '/mcp', policy: FIXTURE_POLICY, ...mcp.forRoot })
      : McpModule.forRootAsync({ path: '/mcp', useFactory: () => ({ policy: FIXTURE_POLICY, ...mcp.forRootAsync() }) });
  const moduleRef = await Test.createTestingModule({
    imports: [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot(), mcpModule],
    providers: [FixtureSkills, { provide: APP_GUARD, useClass: FixtureAuthGuard }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
  await app.listen(port, '127.0.0.1');
  const { port: bound } = app.getHttpServer().address() as AddressInfo;
  return { app, url: new URL(`http://127.0.0.1:${bound}/mcp`), close: () => app.close() };
}

/** A port the system gave and took back (to name a resource URL before the app listens on it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
