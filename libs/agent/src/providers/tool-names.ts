/**
 * A skill name as a model's tool (function) name and back. Skill names are lower-case words joined by dots
 * (`order.draft`); OpenAI and Anthropic tool names (`^[a-zA-Z0-9_-]{1,64}$`) may not hold dots. A dot becomes
 * a hyphen, which no skill name holds, so the mapping is one-to-one: `a.b` and `a_b` stay apart, and the
 * length does not change.
 */
export const toFunctionName = (skill: string): string => skill.replace(/\./g, '-');
export const fromFunctionName = (fn: string): string => fn.replace(/-/g, '.');
