import { DiscoveryService } from '@nestjs/core';
import { SkillInvocation } from './skill-context';
import { SkillOptions } from './skill-options';
import { SkillArgs, StandardParameters } from './standard-schema';
import type { DtoClass } from './dto-parameters';
import { NormalizedSkillOptions } from './skill-definition';
import { validateSkillOptions } from './validate-skill-options';

/** Metadata carrier found by the explorer (DiscoveryService.createDecorator). */
export const SkillMetadata = DiscoveryService.createDecorator<NormalizedSkillOptions>();

/** The decorator of a skill whose parameters are a Standard Schema: the method's argument must take the schema's output. */
export type TypedSkillDecorator<A> = <M extends (args: A, ctx: SkillInvocation) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Declare a provider method as a skill. The method receives `(args, ctx: SkillInvocation)`.
 * The declaration is checked here, when the decorator is applied: a bad name or schema fails at import.
 * With `parameters` a Standard Schema (zod 4.2+), the method's `args` is checked against the schema's output type.
 *
 * @example
 * ＠Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order', parameters: z.object({ symbol: z.string(), qty: z.number().int() }) })
 * draft(args: { symbol: string; qty: number }, ctx: SkillInvocation) { ... }
 */
export function Skill<P extends StandardParameters | DtoClass>(
  options: SkillOptions<P> & { readonly parameters: P },
): TypedSkillDecorator<SkillArgs<P>>;
export function Skill(options: SkillOptions): MethodDecorator;
export function Skill(options: SkillOptions): MethodDecorator {
  const normalized = validateSkillOptions(options);
  const apply = SkillMetadata(normalized);
  return (target, key, descriptor) => {
    if (typeof descriptor?.value !== 'function')
      throw new TypeError(`@Skill('${normalized.name}') must decorate a method (found on ${String(key)}).`);
    apply(target, key, descriptor);
  };
}
