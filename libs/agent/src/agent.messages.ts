export const INVALID_AGENT_SPEC_MESSAGE = (name: unknown, problem: string) =>
  `Invalid agent spec${typeof name === 'string' && name ? ` '${name}'` : ''}: ${problem}.`;

export const MISSING_GUARD_MESSAGE =
  "has no guard policy. Every agent needs one: add guard: { allow: ['market.quote', 'order.draft'], allowExecute: false } to its AgentSpec";

export const UNKNOWN_AGENT_MESSAGE = (name: string, known: string[]) =>
  `No agent named '${name}'. Agents: ${known.length ? known.join(', ') : '(none: pass agents to AgentModule.forRoot)'}.`;

export const DUPLICATE_AGENT_MESSAGE = (name: string) => `Two agents are named '${name}'; agent names must be unique.`;

export const POLICY_WARNING_MESSAGE = (agent: string, details: string) =>
  `Agent '${agent}' policy needs attention: ${details}. Set strictPolicies: true to make this a boot error.`;
