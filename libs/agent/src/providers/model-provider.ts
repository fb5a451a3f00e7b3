import { JsonSchema } from '@zmodu/skills';

/** A tool as the model sees it. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/** One tool call requested by the model. `arguments` is the parsed JSON (or the raw text if it did not parse). */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
}

export type ChatMessage =
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls: readonly ToolCall[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly name: string; readonly content: string };

export interface ModelRequest {
  readonly system: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  readonly signal: AbortSignal;
  /**
   * Given, the provider streams the turn and calls this with each piece of the model's text as it arrives
   * (in order; together they are the turn's `text`). The turn it resolves to is the same as without streaming.
   * Refusals and tool-call arguments are not text: they come in the turn.
   */
  readonly onTextDelta?: (delta: string) => void;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** One model turn: text and/or several tool calls, with token usage. No tool calls means a final answer. */
export interface ModelTurn {
  readonly text: string;
  /** The model's refusal, when it refused (OpenAI's `message.refusal`, Anthropic's `stop_reason: "refusal"`): the run ends `refused`. */
  readonly refusal?: string;
  readonly toolCalls: readonly ToolCall[];
  /**
   * Tool calls of the turn that the provider did not keep (past MAX_TOOL_CALLS_KEPT, our providers keep no more): none
   * runs, they are refused with the calls past the agent's `maxToolCallsPerTurn`, in its one summary denial.
   */
  readonly omittedToolCalls?: number;
  readonly usage: TokenUsage;
}

/** The most tool calls of one turn that our providers keep (the largest `maxToolCallsPerTurn`, and one for the summary). */
export const MAX_TOOL_CALLS_KEPT = 257;

/**
 * Port to a chat model with tool calling, shaped after OpenAI chat completions and
 * Anthropic Messages (several tool calls per turn, tool results by call id, token usage).
 */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelTurn>;
  /**
   * The credentials this provider sends (its API key): AgentModule registers them with the Redactor, which then masks
   * them wherever they appear (run results and events, errors, the audit, the logs). Ours return their key.
   */
  secrets?(): readonly string[];
}
