import { Injectable } from '@nestjs/common';
import { ActionClass } from '@zmodu/guard';
import { ToolCatalog } from '@zmodu/guard/internal';
import { DuplicateSkillException } from './exceptions/duplicate-skill.exception';
import { compileSchema } from './json-schema';
import { RegisteredSkill, SkillHandler, SkillRegistration } from './skill-definition';
import { UnknownSkillException } from './exceptions/unknown-skill.exception';
import { validateSkillOptions } from './validate-skill-options';
import { NormalizedSkillOptions } from './skill-definition';

/** Summary of a skill for listings and policy audits. */
export interface SkillSummary {
  readonly name: string;
  readonly action: ActionClass;
  readonly description: string;
  readonly requiredPermission?: string;
  readonly tenantScoped: boolean;
}

/** Every skill of the application: decorated ones (found at boot) and dynamic ones. */
@Injectable()
export class SkillRegistry implements ToolCatalog {
  private readonly skills = new Map<string, RegisteredSkill>();

  /** Register a dynamic skill. Throws on a bad declaration or a name already taken. */
  register(registration: SkillRegistration): RegisteredSkill {
    if (typeof registration?.handler !== 'function')
      throw new TypeError(`SkillRegistry.register('${String(registration?.name)}') needs a handler function.`);
    const options = validateSkillOptions(registration);
    return this.add(options, registration.handler, registration.source ?? 'SkillRegistry.register');
  }

  private add(options: NormalizedSkillOptions, handler: SkillHandler, source: string): RegisteredSkill {
    const existing = this.skills.get(options.name);
    if (existing) throw new DuplicateSkillException(options.name, existing.source, source);
    const skill: RegisteredSkill = Object.freeze({ ...options, source, handler, validate: compileSchema(options.parameters) });
    this.skills.set(options.name, skill);
    return skill;
  }

  /** Remove a skill; returns it. Throws when the name is unknown. */
  remove(name: string): RegisteredSkill {
    const skill = this.skills.get(name);
    if (!skill) throw new UnknownSkillException(name);
    this.skills.delete(name);
    return skill;
  }

  get(name: string): RegisteredSkill | undefined {
    return this.skills.get(name);
  }

  has(name: string): boolean {
    return this.skills.has(name);
  }

  /** All skills, sorted by name. */
  list(): SkillSummary[] {
    return [...this.skills.values()]
      .map((s) => ({
        name: s.name,
        action: s.action,
        description: s.description,
        requiredPermission: s.requiredPermission,
        tenantScoped: s.tenantScoped,
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Full definitions (with schema) of the given names, or of all skills. */
  definitions(names?: Iterable<string>): RegisteredSkill[] {
    if (!names) return [...this.skills.values()];
    const out: RegisteredSkill[] = [];
    for (const n of names) {
      const s = this.skills.get(n);
      if (s) out.push(s);
    }
    return out;
  }
}
