import { estimateTokens } from '@zmodu/skills/internal';
import { ChatMessage, ModelRequest, TokenUsage, ToolCall } from './model-provider';

/**
 * Token usage estimated at 4 characters a token (the dispatcher's rule for tool calls): what the scripted model
 * reports, and what the agent charges for a turn whose model server reported none.
 */
export function estimateUsage(
  request: Pick<ModelRequest, 'system' | 'messages'> & { readonly tools?: ModelRequest['tools'] },
  turn: { readonly text: string; readonly refusal?: string; readonly toolCalls: readonly ToolCall[] },
): TokenUsage {
  const tools = request.tools?.length ? estimateTokens(JSON.stringify(request.tools)) : 0;
  return {
    inputTokens: estimateTokens(request.system) + request.messages.reduce((n, m) => n + estimateMessage(m), 0) + tools,
    outputTokens:
      estimateTokens(turn.text) +
      estimateTokens(turn.refusal ?? '') +
      turn.toolCalls.reduce((n, c) => n + estimateTokens(c.name) + estimateTokens(argumentsText(c.arguments)), 0),
  };
}

function estimateMessage(m: ChatMessage): number {
  return estimateTokens(m.content) + (m.role === 'assistant' ? m.toolCalls.length * 8 : 0);
}

function argumentsText(args: unknown): string {
  return typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
}
