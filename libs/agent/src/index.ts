// The public API of @zmodu/agent: AgentModule, agent definitions, runs and their results, model providers.
export { AgentModule } from './agent.module';
export { AgentModuleOptions } from './agent-module.options';
export { AGENT_MODULE_OPTIONS, AGENT_OPTIONS_TYPE, AGENT_ASYNC_OPTIONS_TYPE } from './agent.module-definition';
export { AgentRegistry } from './agent.registry';
export { Agent } from './agent';
export { ClientAbortSignal, clientAbortSignal, CLIENT_GONE_MESSAGE } from './client-abort';
export type { ClientResponse } from './client-abort';
export type { AgentBudget, AgentMemory, AgentSpec } from './agent-definition';
export {
  AGENT_NAME_PATTERN,
  DEFAULT_MAX_MALFORMED_TOOL_CALLS,
  DEFAULT_RUN_TIMEOUT_MS,
  MAX_RUN_TIMEOUT_MS,
  MAX_MAX_MALFORMED_TOOL_CALLS,
  DEFAULT_MAX_STEPS,
  MAX_MAX_STEPS,
  DEFAULT_MAX_TOOL_CALLS_PER_TURN,
  MAX_MAX_TOOL_CALLS_PER_TURN,
} from './agent-definition';
export type {
  AgentRunContext,
  AgentRunEvent,
  AgentRunResult,
  AgentStep,
  ExhaustedBudget,
  PendingApproval,
  StopReason,
  ToolCallRecord,
} from './agent-run';
export type { AgentMetricsSnapshot } from './agent-metrics';
export type { ChatMessage, ModelProvider, ModelRequest, ModelTurn, TokenUsage, ToolCall, ToolSpec } from './providers/model-provider';
export { lastObservation, ScriptedModelProvider, ScriptExhaustedError } from './providers/scripted-model.provider';
export { OpenAIModelProvider } from './providers/openai-model.provider';
export { AnthropicModelProvider } from './providers/anthropic-model.provider';
export type { AnthropicModelOptions } from './providers/anthropic-model.provider';
export { toFunctionName, fromFunctionName } from './providers/tool-names';
export type { OpenAIModelOptions } from './providers/openai-model.provider';
export type { ScriptedReply, ScriptedToolCall, ScriptedTurn } from './providers/scripted-model.provider';
export { InvalidAgentSpecException } from './exceptions/invalid-agent-spec.exception';
export { AgentNotFoundException } from './exceptions/agent-not-found.exception';
export { PolicyHealthException } from './exceptions/policy-health.exception';
export type {
  McpServerOptions,
  McpServerCommonOptions,
  McpStdioServerOptions,
  McpHttpServerOptions,
  McpEra,
} from './mcp-client/mcp-server-options';
export {
  DEFAULT_MCP_TIMEOUT_MS,
  DEFAULT_MCP_CONNECT_TIMEOUT_MS,
  DEFAULT_MCP_MAX_RESULT_BYTES,
  DEFAULT_MCP_MAX_TOOLS,
  MCP_SERVER_NAME_PATTERN,
} from './mcp-client/mcp-server-options';
export { mcpToolSegment } from './mcp-client/mcp-tool-name';
export { InvalidMcpServerOptionsException } from './exceptions/invalid-mcp-server-options.exception';
export { McpServerUnavailableException } from './exceptions/mcp-server-unavailable.exception';
export { McpSkillNameTakenException } from './exceptions/mcp-skill-name-taken.exception';
export { McpClientSdkMissingException } from './exceptions/mcp-sdk-missing.exception';
export { AgentWorker } from './worker/agent-worker';
export type { AgentWorkerStats, PostGoalOptions } from './worker/agent-worker';
export { AgentWorkerOptions } from './worker/agent-worker.options';
export type { AgentResultListener } from './worker/agent-worker.options';
export { AGENT_GOAL_QUEUE, AGENT_RUN_STORE } from './worker/agent-worker.constants';
export { AgentQueueOptions } from './worker/agent-queue.options';
export { InProcessGoalQueue } from './worker/in-process-goal-queue';
export { PgBossGoalQueue } from './worker/pg-boss-goal-queue';
export { PG_BOSS_RANGE } from './worker/pg-boss-peer';
export type { PgBossConnection, PgBossGoalQueueOptions } from './worker/pg-boss-goal-queue';
export type {
  AgentGoalScope,
  AgentRunClock,
  AgentRunLease,
  AgentRunLimits,
  AgentRunMailbox,
  AgentRunOrigin,
  AgentRunOutcome,
  AgentRunRecord,
  AgentRunStatus,
  AgentRunStore,
  GoalQueue,
  NewAgentRun,
  PushOptions,
  RecoverableRuns,
  RefusedRun,
} from './worker/worker.ports';
export { holdUnhandledRejectionNet, unhandledRejectionCounts } from './worker/unhandled-rejection-net';
export type { UnhandledRejectionCounts } from './worker/unhandled-rejection-net';
export { InMemoryAgentRunStore } from './worker/in-memory-agent-run.store';
export { TypeOrmAgentRunStore } from './worker/typeorm-agent-run.store';
export { ZMODU_AGENT_MIGRATIONS, ZmoduAgentRuns1764560000000, ZmoduAgentRunsFence1764612700000 } from './worker/agent-run.migration';
export { MailboxFullException } from './exceptions/mailbox-full.exception';
export { InvalidGoalException } from './exceptions/invalid-goal.exception';
export { InvalidWorkerOptionsException } from './exceptions/invalid-worker-options.exception';
export { WorkerDisabledException } from './exceptions/worker-disabled.exception';
export type { AgentJobOrigin, AgentJobRecord, AgentJobStore, MissedTickPolicy, NewAgentJob } from './jobs/agent-job.ports';
export { cronTickJobId } from './jobs/agent-job.ports';
export { InMemoryAgentJobStore } from './jobs/in-memory-agent-job.store';
export { TypeOrmAgentJobStore } from './jobs/typeorm-agent-job.store';
export {
  ZmoduAgentJobs1764570000000,
  ZmoduAgentJobScope1764630270000,
  ZmoduAgentJobTickClaims1764580000000,
} from './jobs/agent-job.migration';
export { AGENT_JOB_CRON_PREFIX, AgentJobScheduler, agentJobCronName, DEFAULT_JOB_SYNC_MS } from './jobs/agent-job-scheduler';
export { AgentJobTicks, cronTickNameProblem } from './jobs/agent-job-ticks';
export type { AgentTickGoal, AgentTickOutcome, AgentTickScope } from './jobs/agent-job-ticks';
export { AGENT_CRON_METADATA, AgentCron, agentCronProblem } from './jobs/agent-cron.decorator';
export type { AgentCronDefinition, AgentCronOptions } from './jobs/agent-cron.decorator';
export { loadSchedulePackage } from './jobs/schedule-package';
export type { CronJobRegistry, SchedulePackage } from './jobs/schedule-package';
export { SchedulePackageUnavailableException } from './exceptions/schedule-package-unavailable.exception';
export type { AgentJobPoster } from './jobs/agent-job-scheduler';
export { cronProblem } from './jobs/agent-job-cron';
export { AGENT_JOB_SKILL_NAMES, AgentJobSkills } from './jobs/agent-job-skills';
export type { AgentJobSkillPermissions, AgentJobSkillsOptions, SchedulableTask } from './jobs/agent-job-skills';
export { AGENT_JOB_METADATA, AgentJob, agentJobProblem, staticAgentJob } from './jobs/agent-job.decorator';
export type { AgentJobDefinition } from './jobs/agent-job.decorator';
export { AgentJobsOptions } from './jobs/agent-jobs.options';
export { AgentJobsRunner } from './jobs/agent-jobs.runner';
export { AGENT_JOB_STORE } from './jobs/agent-job-store.provider';
export { InvalidJobsOptionsException } from './exceptions/invalid-jobs-options.exception';
