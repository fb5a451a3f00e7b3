import { INestApplication, Injectable, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Skill } from '@zmodu/skills';
import { AdminModule } from '../admin.module';
import { AdminModuleForRootOptions } from '../admin.module-definition';
import { AdminCaller } from '../admin.options';

type Imports = NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>;

/** An initialized app of `imports` and AdminModule.forRoot(`admin`) (no approvals unless named), its caller from test headers. */
export async function startAdminApp(
  imports: Imports,
  admin: AdminModuleForRootOptions,
  providers: Provider[] = [],
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [...imports, AdminModule.forRoot({ approvals: false, resolveCaller: callerFromHeaders, ...admin })],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return app;
}

/** The caller from test headers: `x-test-tenant` and `x-test-permissions` (comma-separated); none without a tenant. */
export const callerFromHeaders = (req: unknown): AdminCaller | undefined => {
  const h = (req as { headers: Record<string, string | undefined> }).headers;
  return h['x-test-tenant']
    ? { tenantId: h['x-test-tenant'], userId: 'admin', permissions: (h['x-test-permissions'] ?? '').split(',') }
    : undefined;
};

/** The headers of a caller of `tenant` holding `permissions`. */
export const as = (tenant: string, ...permissions: string[]) => ({ 'x-test-tenant': tenant, 'x-test-permissions': permissions.join(',') });

/** A small catalog: a read skill anyone may call, one that needs market:read, and execute-class skills. */
@Injectable()
export class DeskSkills {
  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote a symbol.',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
  })
  quote(args: { symbol: string }) {
    return { symbol: args.symbol, price: 101.5 };
  }

  @Skill({ name: 'market.depth', action: 'read', description: 'The order book of a symbol.', requiredPermission: 'market:read' })
  depth() {
    return { bids: [], asks: [] };
  }

  @Skill({ name: 'order.submit', action: 'execute', description: 'Submit an order.', requiredPermission: 'order:submit' })
  submit() {
    return { submitted: true };
  }

  @Skill({ name: 'ledger.close', action: 'execute', description: 'Close the ledger of the day.' })
  close() {
    return { closed: true };
  }
}
