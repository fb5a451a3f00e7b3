import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createCache } from 'cache-manager';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { SkillsModule } from '@zmodu/skills';
import { TestDatabase } from '@zmodu/db/testing';
import { AdminModule } from '../admin.module';
import { ZMODU_ADMIN_MIGRATIONS } from '../config/admin-config.migration';
import { AdminSkillsModule } from '../skills/admin-skills.module';
import { AdminDelegatedRequest, AdminSkillsModuleOptions } from '../skills/admin-skills.options';

/** The declared config keys of the fixture: mutable and read-only, JSON types and a JSON Schema. */
export const CONFIG_KEYS = {
  'orders.maxDraft': { type: 'integer', mutable: true, default: 5, description: 'Most open draft orders per user' },
  'orders.currency': { type: 'string', mutable: false, default: 'EUR', description: 'The currency of prices' },
  'feature.beta': { type: 'boolean', mutable: true, default: false },
  'risk.limit': { type: 'number', mutable: true },
  'ui.banner': {
    type: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 80 }, level: { enum: ['info', 'warn'] } },
      required: ['text'],
      additionalProperties: false,
    },
    mutable: true,
  },
} as const;

/** The caller of an admin endpoint, from test headers: x-test-tenant and x-test-permissions (comma-separated). */
export const callerFromHeaders = (req: unknown) => {
  const h = (req as { headers: Record<string, string | undefined> }).headers;
  return h['x-test-tenant']
    ? { tenantId: h['x-test-tenant'], userId: h['x-test-user'] ?? 'admin', permissions: (h['x-test-permissions'] ?? '').split(',') }
    : undefined;
};

export interface AdminSkillsFixture {
  readonly app: INestApplication;
  /** Tenant-scoped (default key scheme `${tenant}:${key}`). */
  readonly sessions: ReturnType<typeof createCache>;
  /** Global: holds no tenant data. */
  readonly reference: ReturnType<typeof createCache>;
  /** Tenant-scoped with its own key scheme (`t/${tenant}/${key}`) and a per-tenant clear. */
  readonly quotes: ReturnType<typeof createCache>;
  /** The tenants quotes' clearTenant was called for. */
  readonly clearedTenants: string[];
  /** What the application callbacks received. */
  readonly delegated: AdminDelegatedRequest[];
}

/**
 * A small app: TypeORM on the test database (the guard's and ZMODU_ADMIN_MIGRATIONS), GuardModule with its TypeORM audit
 * (each entry's arguments and result kept), SkillsModule, AdminSkillsModule with three real cache-manager caches and the keys above, and
 * AdminModule serving the config endpoints. `over` replaces AdminSkillsModule options.
 */
export async function startAdminSkillsApp(db: TestDatabase, over: Partial<AdminSkillsModuleOptions> = {}): Promise<AdminSkillsFixture> {
  const sessions = createCache();
  const reference = createCache();
  const quotes = createCache();
  const clearedTenants: string[] = [];
  const delegated: AdminDelegatedRequest[] = [];
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(
        await db.options({
          migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_ADMIN_MIGRATIONS],
          migrationsRun: true,
        }),
      ),
      GuardModule.forRoot({ quotaStore: 'memory' }),
      SkillsModule.forRoot(),
      AdminSkillsModule.forRoot({
        caches: {
          sessions,
          reference: { cache: reference, scope: 'global' },
          quotes: {
            cache: quotes,
            tenantKey: (tenant, key) => `t/${tenant}/${key}`,
            clearTenant: async (tenant, cache) => {
              clearedTenants.push(tenant);
              await cache.del(`t/${tenant}/all`);
            },
          },
        },
        config: { keys: CONFIG_KEYS },
        audit: { allTenantsPermission: 'platform:audit' },
        onUserManage: (request) => {
          delegated.push(request);
          return { done: request.operation, user: request.target, tenant: request.tenantId };
        },
        ...over,
      }),
      AdminModule.forRoot({ approvals: false, config: true, resolveCaller: callerFromHeaders }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return { app, sessions, reference, quotes, clearedTenants, delegated };
}
