import { DiscoveryService } from '@nestjs/core';
import { SkillOptions } from './skill-options';
import { NormalizedSkillOptions } from './skill-definition';
import { validateSkillOptions } from './validate-skill-options';

/** Metadata carrier found by the explorer (DiscoveryService.createDecorator). */
export const SkillMetadata = DiscoveryService.createDecorator<NormalizedSkillOptions>();

/**
 * Declare a provider method as a skill. The method receives `(args, ctx: SkillInvocation)`.
 * The declaration is checked here, when the decorator is applied: a bad name or schema fails at import.
 *
 * @example
 * ＠Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order', parameters: {...} })
 * draft(args: { symbol: string; qty: number }, ctx: SkillInvocation) { ... }
 */
export function Skill(options: SkillOptions): MethodDecorator {
  const normalized = validateSkillOptions(options);
  const apply = SkillMetadata(normalized);
  return (target, key, descriptor) => {
    if (typeof descriptor?.value !== 'function')
      throw new TypeError(`@Skill('${normalized.name}') must decorate a method (found on ${String(key)}).`);
    apply(target, key, descriptor);
  };
}
