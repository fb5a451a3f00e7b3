import type { AdminCache, AdminSkillsModuleOptions, ConfigKeySpec } from '@zmodu/admin';

/**
 * The config keys of the desk that admins (GET /admin/config, PUT /admin/config/:key) and the admin agent
 * (admin.config.get / admin.config.set) may read, per tenant; only the mutable ones may change.
 */
export const SAMPLE_CONFIG_KEYS: Record<string, ConfigKeySpec> = {
  'orders.maxDraftQuantity': {
    type: 'integer',
    mutable: true,
    default: 1000,
    description: 'The largest quantity the desk drafts in one order',
  },
  'desk.banner': {
    type: { type: 'string', maxLength: 200 },
    mutable: true,
    default: '',
    description: 'A note shown to the desk',
  },
  'desk.currency': { type: 'string', mutable: false, default: 'USD', description: 'The currency of the desk (fixed)' },
};

/**
 * AdminSkillsModule's options: the app's cache-manager cache (CACHE_MANAGER of @nestjs/cache-manager) as `quotes`,
 * keyed per tenant (`${tenant}:${key}`, the default scheme), and the config keys above.
 */
export function sampleAdminSkills(cache: AdminCache): AdminSkillsModuleOptions {
  return { caches: { quotes: cache }, config: { keys: SAMPLE_CONFIG_KEYS } };
}
