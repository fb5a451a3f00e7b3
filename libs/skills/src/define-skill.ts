import { SkillInvocation } from './skill-context';
import { SkillRegistration } from './skill-definition';
import { SkillParameters } from './skill-options';
import { SkillArgs } from './standard-schema';

/** What `defineSkill` takes: `@Skill`'s options and the handler, whose argument is typed by `parameters`. */
export type SkillDefinition<P extends SkillParameters> = Omit<SkillRegistration<P>, 'handler'> & {
  readonly handler: (args: SkillArgs<P>, ctx: SkillInvocation) => unknown;
};

/**
 * A skill registered in code (`SkillRegistry.register(defineSkill({...}))`), with the same options as `@Skill`. With
 * `parameters` a Standard Schema (zod 4.2+), `handler`'s argument is the schema's output, typed: no cast. Checked when
 * it is registered, like a decorated one.
 *
 * @example
 * registry.register(defineSkill({
 *   name: 'order.draft', action: 'propose', description: 'Draft an order',
 *   parameters: z.object({ symbol: z.string(), qty: z.number().int().positive() }),
 *   handler: ({ symbol, qty }, ctx) => orders.draft(ctx.tenantId!, symbol, qty),
 * }));
 */
export function defineSkill<P extends SkillParameters>(definition: SkillDefinition<P>): SkillRegistration<P> {
  return definition as unknown as SkillRegistration<P>;
}
