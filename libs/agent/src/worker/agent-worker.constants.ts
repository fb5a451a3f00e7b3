/** The AgentRunStore of the AgentWorker (null when AgentModule has no `worker` option). */
export const AGENT_RUN_STORE = Symbol('ZMODU_AGENT_RUN_STORE');
