import { ModuleMetadata } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { GuardModule, GuardModuleOptions } from '@zmodu/guard';
import { SkillsModule } from '../skills.module';

/**
 * A compiled (not yet initialized) testing module of SkillsModule over GuardModule on its in-memory stores (`guard`:
 * more of the guard's options), with the spec's providers and imports. The spec calls init(): it boots the explorer,
 * which finds the skills or refuses them.
 */
export function skillsTestingModule(
  metadata: Pick<ModuleMetadata, 'providers' | 'imports'> & { guard?: Partial<GuardModuleOptions> } = {},
): Promise<TestingModule> {
  const { guard, imports = [], providers = [] } = metadata;
  return Test.createTestingModule({
    imports: [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory', ...guard }), SkillsModule.forRoot(), ...imports],
    providers,
  }).compile();
}
