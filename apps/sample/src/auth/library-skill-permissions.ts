import { Injectable, OnModuleInit } from '@nestjs/common';
import { SkillRegistry } from '@zmodu/skills';
import { PERMISSIONS } from './auth.constants';

/**
 * The permission code the sample asks of each library skill that declares none: like the trading skills, these run
 * only for a caller whose token carries the code (the dispatcher answers `permission_denied` otherwise).
 * memory.recall needs none: it reads only the caller's own notes, which a run of an agent with `memory` already puts in
 * its prompt.
 */
export const LIBRARY_SKILL_PERMISSIONS: ReadonlyMap<string, string> = new Map([
  ['memory.remember', PERMISSIONS.memoryWrite],
  ['list_schedulable_tasks', PERMISSIONS.jobRead],
  ['list_jobs', PERMISSIONS.jobRead],
  ['schedule_job', PERMISSIONS.jobSchedule],
  ['cancel_job', PERMISSIONS.jobSchedule],
]);

/**
 * Gives MemoryModule's and AgentModule's skills the sample's permission codes: each is taken out of the
 * SkillRegistry and registered again, the same skill (handler, schema, action) with `requiredPermission` set.
 * MemoryModule and AgentModule are global modules, so their skills are registered before this root-module provider's
 * onModuleInit, and before any run.
 */
@Injectable()
export class LibrarySkillPermissions implements OnModuleInit {
  constructor(private readonly registry: SkillRegistry) {}

  onModuleInit(): void {
    for (const [name, permission] of LIBRARY_SKILL_PERMISSIONS) {
      const skill = this.registry.get(name);
      if (!skill) throw new Error(`The sample gives '${name}' the permission '${permission}', but no module registered it.`);
      if (skill.requiredPermission !== undefined && skill.requiredPermission !== permission)
        throw new Error(`'${name}' already requires '${skill.requiredPermission}'; the sample would require '${permission}'.`);
      const { validate: _compiled, ...declaration } = this.registry.remove(name);
      this.registry.register({ ...declaration, requiredPermission: permission, source: `${declaration.source} (sample permissions)` });
    }
  }
}
