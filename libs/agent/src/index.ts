// The public API of @zmodu/agent: AgentModule, agent definitions, runs and their results, model providers.
export { AgentModule } from './agent.module';
export { AgentModuleOptions } from './agent-module.options';
export { AgentRegistry } from './agent.registry';
export { Agent } from './agent';
export { ClientAbortSignal } from './client-abort';
export type { AgentBudget, AgentMemory, AgentSpec } from './agent-definition';
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
export type { ChatMessage, ModelProvider, ModelRequest, ModelTurn, TokenUsage, ToolCall, ToolSpec } from './providers/model-provider';
export { lastObservation, ScriptedModelProvider } from './providers/scripted-model.provider';
export { OpenAIModelProvider } from './providers/openai-model.provider';
export { AnthropicModelProvider } from './providers/anthropic-model.provider';
export type { AnthropicModelOptions } from './providers/anthropic-model.provider';
export type { OpenAIModelOptions } from './providers/openai-model.provider';
export type { ScriptedReply } from './providers/scripted-model.provider';
export { AgentNotFoundException } from './exceptions/agent-not-found.exception';
export type { McpServerOptions, McpStdioServerOptions, McpHttpServerOptions } from './mcp-client/mcp-server-options';
export { McpServerUnavailableException } from './exceptions/mcp-server-unavailable.exception';
export { AgentWorker } from './worker/agent-worker';
export { AgentWorkerModule } from './worker/agent-worker.module';
export { AgentJobsModule } from './jobs/agent-jobs.module';
export type { PostGoalOptions } from './worker/agent-worker';
export { AgentWorkerOptions } from './worker/agent-worker.options';
export { AGENT_GOAL_QUEUE } from './worker/agent-worker.constants';
export { AgentQueueOptions } from './worker/agent-queue.options';
export type { PgBossGoalQueueOptions } from './worker/pg-boss-goal-queue';
export type { AgentRunRecord, AgentRunStatus, AgentRunStore, GoalQueue } from './worker/worker.ports';
export { ZMODU_AGENT_MIGRATIONS } from './worker/agent-run.migration';
export { MailboxFullException } from './exceptions/mailbox-full.exception';
export { InvalidGoalException } from './exceptions/invalid-goal.exception';
export type { AgentJobRecord, AgentJobStore } from './jobs/agent-job.ports';
export { agentJobCronName } from './jobs/agent-job-scheduler';
export { AgentJobTicks } from './jobs/agent-job-ticks';
export { clientAbortSignal } from './client-abort';
export { AgentCron } from './jobs/agent-cron.decorator';
export type { AgentCronOptions } from './jobs/agent-cron.decorator';
export type { AgentJobSkillPermissions, SchedulableTask } from './jobs/agent-job-skills';
export { AgentJob } from './jobs/agent-job.decorator';
export { AgentJobsOptions } from './jobs/agent-jobs.options';
export { AGENT_JOB_STORE } from './jobs/agent-job-store.provider';
export { ZmoduError } from '@zmodu/core';
