// @zmodu/agent/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/agent and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export type { AgentMetricsSnapshot } from './agent-metrics';
export { ScriptExhaustedError } from './providers/scripted-model.provider';
export { toFunctionName } from './providers/tool-names';
export { InvalidAgentSpecException } from './exceptions/invalid-agent-spec.exception';
export { PolicyHealthException } from './exceptions/policy-health.exception';
export { InvalidMcpServerOptionsException } from './exceptions/invalid-mcp-server-options.exception';
export { McpSkillNameTakenException } from './exceptions/mcp-skill-name-taken.exception';
export { McpClientSdkMissingException } from './exceptions/mcp-sdk-missing.exception';
export type { AgentWorkerStats } from './worker/agent-worker';
export { AGENT_RUN_STORE } from './worker/agent-worker.constants';
export { InProcessGoalQueue } from './worker/in-process-goal-queue';
export { PgBossGoalQueue } from './worker/pg-boss-goal-queue';
export { TypeOrmAgentRunStore } from './worker/typeorm-agent-run.store';
export { InvalidWorkerOptionsException } from './exceptions/invalid-worker-options.exception';
export { RunJournalConflictException } from './exceptions/run-journal-conflict.exception';
export { RunJournalStoppedException } from './journal/journal-cursor';
export type { NewAgentJob } from './jobs/agent-job.ports';
export { SchedulePackageUnavailableException } from './exceptions/schedule-package-unavailable.exception';
export { AgentJobsRunner } from './jobs/agent-jobs.runner';
export { InvalidJobsOptionsException } from './exceptions/invalid-jobs-options.exception';
