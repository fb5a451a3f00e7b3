import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SkillDispatcher } from './skill.dispatcher';
import { SkillExplorer } from './skill.explorer';
import { SkillRegistry } from './skill.registry';

/**
 * The skill registry (filled at boot from `@Skill` methods) and the dispatcher.
 * Needs `GuardModule` (audit log, token quota) in the application; `AgentModule.forRoot` imports both.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [SkillRegistry, SkillExplorer, SkillDispatcher],
  exports: [SkillRegistry, SkillDispatcher, SkillExplorer],
})
export class SkillsModule {
  static forRoot(options: { isGlobal?: boolean } = {}): DynamicModule {
    return { module: SkillsModule, global: options.isGlobal ?? true };
  }
}
