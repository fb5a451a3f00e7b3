/** The AgentRunStore of the AgentWorker (AgentWorkerModule). */
export const AGENT_RUN_STORE = Symbol('ZMODU_AGENT_RUN_STORE');
/** The GoalQueue of the AgentWorker: in-process, pg-boss (cluster mode) or the application's own. */
export const AGENT_GOAL_QUEUE = Symbol('ZMODU_AGENT_GOAL_QUEUE');
