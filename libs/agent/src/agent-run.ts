import type { RunJournal } from './journal/run-journal';
import { AgentMetricsSnapshot } from './agent-metrics';
import type { ToolCallRecord } from './tool-call-record';

export type { ToolCallRecord } from './tool-call-record';

/**
 * Why a run ended. `budget_exhausted`: a budget ran out (`AgentRunResult.budget` says which);
 * `quota_unavailable`: the token quota could not be read (its store failed), so the run stopped, fail closed;
 * `refused`: the model refused (its refusal is the answer); `empty_answer`: the model answered nothing, no text
 * and no tool call; `malformed_tool_calls`: the model sent tool-call arguments that are not JSON more often than
 * `maxMalformedToolCalls` allows (each one before that was answered with a tool error it could correct);
 * `aborted`: the caller's signal aborted the run; `timed_out`: the run passed its deadline (`runTimeoutMs`), and the
 * model request or tool call in flight was aborted with it; `waiting`: a proposal of the run waits for a human
 * (AgentRunContext.waitForApprovals), and the run goes on once it is decided.
 */
export type StopReason =
  | 'final'
  | 'max_steps'
  | 'budget_exhausted'
  | 'quota_unavailable'
  | 'aborted'
  | 'timed_out'
  | 'model_error'
  | 'refused'
  | 'empty_answer'
  | 'malformed_tool_calls'
  | 'waiting';

/** The budget that ran out: the run's (`tokensPerRun`), the tenant's period budget, or the user's share of it. */
export type ExhaustedBudget = 'run' | 'tenant' | 'user';

export interface AgentStep {
  readonly index: number;
  readonly text: string;
  readonly toolCalls: ToolCallRecord[];
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

export interface AgentRunResult {
  readonly runId: string;
  readonly agent: string;
  readonly answer: string;
  readonly stoppedReason: StopReason;
  readonly steps: AgentStep[];
  readonly metrics: AgentMetricsSnapshot;
  /** Proposals of this run that wait for a human (a tool call ended in needs_human or execute_not_permitted). */
  readonly pendingApprovals: PendingApproval[];
  /**
   * Set when the run ended on a model error, was aborted, or could not read its quota. Redacted (every secret the
   * redactor knows, the model providers' keys too) and at most 500 characters: a provider's failure says its kind and
   * status, quoting at most 200 characters of what the model server said.
   */
  readonly error?: string;
  /** With `stoppedReason: 'budget_exhausted'`: which budget ran out. */
  readonly budget?: ExhaustedBudget;
}

/** Who runs the agent: the same fields every caller puts in a SkillContext, minus the guard (the agent brings it). */
export interface AgentRunContext {
  readonly tenantId?: string | null;
  readonly userId?: string | null;
  readonly permissions?: readonly string[];
  readonly runId?: string;
  readonly signal?: AbortSignal;
  /** This run's deadline in ms, instead of the agent's `runTimeoutMs` (default 300000). */
  readonly timeoutMs?: number;
  /**
   * Given, the run tells what happens as it happens (and asks the model to stream its text): a `delta` per piece
   * of the model's text, a `step` per tool call once the dispatcher decided it, and `final` with the result.
   * A listener that throws does not stop the run (logged once per run).
   */
  readonly onEvent?: (event: AgentRunEvent) => void;
  /**
   * The run's journal (the AgentWorker gives one to each run it claims): the turns and tool calls of earlier attempts
   * are replayed from it (not asked of the model, not run again), and every new one is written to it before the run
   * goes on. Without one, nothing is journaled.
   */
  readonly journal?: RunJournal;
  /**
   * With a journal: a tool call that puts a proposal in front of a human (needs_human, execute_not_permitted) makes the
   * run wait, after the other calls of its turn: it ends `waiting`, with the proposals in `pendingApprovals`, and is
   * resumed (by the AgentWorker) once they are decided, the decision being that call's result. Without it, the model
   * is told the proposal waits, and goes on.
   */
  readonly waitForApprovals?: boolean;
}

/**
 * What a run tells its listener, in order. `delta`: a piece of the model's text in model turn `step`, redacted on its
 * own (the pieces of a turn add up to that step's `text`, which is redacted whole; the answer is the last turn's text,
 * plus the runtime's note when a proposal waits for a human). `step`: one tool call of turn `step`, as the result shows it (decision, cause, outcome,
 * arguments and the observation the model saw). `final`: the run's result, last.
 */
export type AgentRunEvent =
  | { readonly type: 'delta'; readonly step: number; readonly text: string }
  | { readonly type: 'step'; readonly step: number; readonly toolCall: ToolCallRecord }
  | { readonly type: 'final'; readonly result: AgentRunResult };

export interface PendingApproval {
  readonly proposalId: string;
  readonly verdict: 'needs_human' | 'execute_not_permitted';
  readonly skill: string;
  readonly reason: string | null;
}
