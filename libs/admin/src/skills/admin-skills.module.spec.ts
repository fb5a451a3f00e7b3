import { Test } from '@nestjs/testing';
import { GuardModule } from '@zmodu/guard';
import { SkillRegistry, SkillsModule } from '@zmodu/skills';
import { AdminConfig } from '../config/admin-config.service';
import { InMemoryAdminConfigStore } from '../config/in-memory-admin-config.store';
import { ADMIN_CONFIG_STORE } from './admin-skills.constants';
import { AdminSkillsModule } from './admin-skills.module';
import { DataSourceMissingException } from '@zmodu/core';
import { InvalidAdminSkillsOptionsException } from './exceptions/invalid-admin-skills-options.exception';

const base = [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot()];
const KEYS = { keys: { 'a.b': { type: 'integer' as const, mutable: true } } };

describe('AdminSkillsModule', () => {
  it('forRootAsync builds the options from a factory, with the permission codes it overrides', async () => {
    const store = new InMemoryAdminConfigStore();
    const app = await Test.createTestingModule({
      imports: [
        ...base,
        AdminSkillsModule.forRootAsync({ useFactory: async () => ({ store, config: KEYS, permissions: { config: 'ops:config' } }) }),
      ],
    }).compile();
    await app.init();
    try {
      expect(app.get(ADMIN_CONFIG_STORE)).toBe(store);
      expect(app.get(AdminConfig).keys()).toEqual(['a.b']);
      expect(app.get(SkillRegistry).get('admin.config.set')?.requiredPermission).toBe('ops:config');
      expect(app.get(SkillRegistry).get('admin.cache.clear')?.requiredPermission).toBe('admin:cache');
    } finally {
      await app.close();
    }
  });

  it('fails at boot naming the field of a bad option, and without a DataSource for declared keys', async () => {
    await expect(
      Test.createTestingModule({ imports: [...base, AdminSkillsModule.forRoot({ caches: { sessions: {} as never } })] }).compile(),
    ).rejects.toThrow(InvalidAdminSkillsOptionsException);
    const noDataSource = Test.createTestingModule({ imports: [...base, AdminSkillsModule.forRoot({ config: KEYS })] }).compile();
    await expect(noDataSource).rejects.toThrow(DataSourceMissingException);
    await expect(noDataSource).rejects.toThrow(/AdminSkillsModule\.forRoot\(\{ store \}\) is 'typeorm'.*the tenants' config values/);
    // No key declared: nothing to store, so no DataSource is needed.
    const app = await Test.createTestingModule({ imports: [...base, AdminSkillsModule.forRoot()] }).compile();
    expect(app.get(AdminConfig).keys()).toEqual([]);
    await app.close();
  });
});
