import { GuardPolicy } from '@zmodu/guard';
import { SkillSummary } from '@zmodu/skills';
import { ModelProvider } from './providers/model-provider';

/** Memory injected into the system prompt. Recall with a missing tenant or user returns nothing. */
export interface AgentMemory {
  recallBlock(scope: { tenantId: string; userId: string }, goal: string): Promise<string>;
}

export interface AgentBudget {
  /** Tokens one run may spend (model turns and tool calls); past it, calls are `denied_budget`. */
  readonly tokensPerRun?: number;
  /** Tokens per tenant per quota period for this agent, persisted (TokenQuota). */
  readonly tokensPerPeriod?: number;
  /** Fair use: the fraction (0 < share <= 1) of the tenant's period budget one user may spend with this agent. */
  readonly userShare?: number;
  /** Fair use: tokens one user of a tenant may spend per quota period with this agent. With userShare, the smaller applies. */
  readonly tokensPerUserPerPeriod?: number;
}

/** Declarative wiring of one agent. `guard` is required: there is no unguarded agent. */
export interface AgentSpec {
  readonly name: string;
  readonly provider: ModelProvider;
  /** The skills the model is offered: names, or a filter over the registry. The guard still decides each call. */
  readonly skills: readonly string[] | ((skill: SkillSummary) => boolean);
  readonly guard: GuardPolicy;
  readonly memory?: AgentMemory;
  readonly systemPrompt?: string;
  /** Model turns per run. Default 8, at most 100. */
  readonly maxSteps?: number;
  /**
   * Tool calls run per model turn. The calls past it are not run and not answered one by one: ONE summary denial,
   * {"error":"ToolDenied","reason":"denied_turn_cap","refused":N,"maxToolCallsPerTurn":16}, answers the first of them,
   * counted and audited once; the others reach neither the audit nor the conversation. Default 16, at most 256.
   */
  readonly maxToolCallsPerTurn?: number;
  /**
   * Tool calls whose arguments are not JSON that a run answers with a tool error the model can correct
   * (`{"error":"InvalidArguments","reason":"arguments are not valid JSON: ..."}`, audited as invalid_arguments);
   * one more ends the run `malformed_tool_calls`.
   * Default 3, at most 100.
   */
  readonly maxMalformedToolCalls?: number;
  readonly budget?: AgentBudget;
  /**
   * The run's deadline (ms): past it the model request in flight and the tool call running are aborted and the run
   * ends `timed_out`. `AgentRunContext.timeoutMs` overrides it for one run. Default 300000 (5 minutes), at most 86400000.
   */
  readonly runTimeoutMs?: number;
  /**
   * How long a run of the AgentWorker waits for the human decisions on its proposals (a run that waits holds no slot):
   * past it, what is still pending is decided `expired` for the run, which goes on. Default 86400000 (a day), at most
   * 2592000000 (30 days).
   */
  readonly maxWaitMs?: number;
  /**
   * When a run that waits on several proposals at once goes on. `'all'` (default): once every one is decided, each
   * decision the result of the call that proposed. `'each'`: once any is decided: the model is told that decision, and
   * that the others are pending; at its final answer the run waits for those still pending, and each decision that
   * comes is told as a message, from which the model goes on (to a new final answer).
   */
  readonly resumeOn?: 'all' | 'each';
}

export const DEFAULT_MAX_STEPS = 8;
export const MAX_MAX_STEPS = 100;
export const DEFAULT_MAX_TOOL_CALLS_PER_TURN = 16;
export const DEFAULT_MAX_MALFORMED_TOOL_CALLS = 3;
export const MAX_MAX_MALFORMED_TOOL_CALLS = 100;
export const MAX_MAX_TOOL_CALLS_PER_TURN = 256;
export const DEFAULT_RUN_TIMEOUT_MS = 300_000;
export const MAX_RUN_TIMEOUT_MS = 86_400_000;
export const DEFAULT_MAX_WAIT_MS = 86_400_000;
export const MAX_MAX_WAIT_MS = 2_592_000_000;
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
