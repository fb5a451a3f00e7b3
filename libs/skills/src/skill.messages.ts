export const INVALID_SKILL_MESSAGE = (name: unknown, problem: string) =>
  `Invalid @Skill${typeof name === 'string' && name ? ` '${name}'` : ''}: ${problem}.`;

export const DUPLICATE_SKILL_MESSAGE = (name: string, first: string, second: string) =>
  `Duplicate skill name '${name}': declared by ${first} and by ${second}. Skill names must be unique; rename one of them.`;

export const UNKNOWN_SKILL_REMOVE_MESSAGE = (name: string) => `Cannot remove skill '${name}': no such skill is registered.`;

export const REQUEST_SCOPED_SKILL_PROBLEM = (owner: string) =>
  `skills must live on singleton providers; ${owner} is request-scoped. Read request data from the SkillInvocation context instead`;

export const MISSING_GUARD_MESSAGE =
  'SkillDispatcher.dispatch needs a SkillContext with a guard: build it with createSkillContext({ guard: new Guard({ allow: [...], allowExecute: false }), ... }).';

export const INVALID_CONTEXT_MESSAGE = (what: string) => `Invalid SkillContext: ${what}.`;
