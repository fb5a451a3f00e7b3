import { ServerResponse } from 'node:http';
import { FakeTurn, localProtocolServer, LocalProtocolServer, ProtocolFault, ReceivedRequest } from './protocol-faults';

export type MessagesRequest = ReceivedRequest<{
  readonly model: string;
  readonly stream?: boolean;
  readonly system?: unknown;
  readonly messages: ReadonlyArray<{ role: string; content: unknown }>;
  readonly tools?: ReadonlyArray<{ name: string }>;
}>;

/** Its `url` is the base URL (the SDK appends /v1/messages). */
export type AnthropicProtocolServer = LocalProtocolServer<MessagesRequest['body']>;

/**
 * A local server speaking Anthropic Messages (POST /v1/messages), as JSON or, with `stream: true`, as named
 * Server-Sent Events (message_start, content_block_start/delta/stop, message_delta, message_stop; shapes from the
 * Anthropic API reference). `play` decides each turn from the request, or a fault to play instead (see ProtocolFault).
 */
export async function anthropicProtocolServer(
  play: (request: MessagesRequest) => FakeTurn | ProtocolFault,
): Promise<AnthropicProtocolServer> {
  return localProtocolServer('', { answer, stream, truncated }, play);
}

const USAGE = { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 };
const toolName = (skill: string) => skill.replace(/\./g, '-');
const MESSAGE = { id: 'msg_local', type: 'message', role: 'assistant', model: 'local', stop_sequence: null };

function answer(res: ServerResponse, turn: FakeTurn): void {
  const calls = turn.toolCalls ?? [];
  const content = [
    ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
    // A non-streamed tool_use carries its input as an object; `raw` puts the text there instead (a broken server).
    ...calls.map((c, i) => ({ type: 'tool_use', id: `toolu_${i + 1}`, name: toolName(c.name), input: c.raw ?? c.arguments })),
  ];
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...MESSAGE, content, stop_reason: calls.length ? 'tool_use' : 'end_turn', usage: USAGE }));
}

function stream(res: ServerResponse, turn: FakeTurn): void {
  const send = (event: Record<string, unknown>) => res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  send({ type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1 } } });
  let index = 0;
  const words = turn.text?.match(/\s*\S+\s*/g) ?? [];
  if (words.length || turn.hang) {
    send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    if (turn.hang) return void send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: words[0] ?? '...' } });
    for (const text of words) send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    send({ type: 'content_block_stop', index });
    index++;
  }
  for (const [i, call] of (turn.toolCalls ?? []).entries()) {
    // The block opens with an empty input; the input comes as partial JSON, in two pieces.
    const json = call.raw ?? JSON.stringify(call.arguments);
    send({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: `toolu_${i + 1}`, name: toolName(call.name), input: {} },
    });
    send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) } });
    send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(5) } });
    send({ type: 'content_block_stop', index });
    index++;
  }
  const stopReason = turn.toolCalls?.length ? 'tool_use' : 'end_turn';
  send({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: USAGE.output_tokens } });
  send({ type: 'message_stop' });
  res.end();
}

/** The start of an answer: the JSON body's first bytes, or the stream's first events (the fault then drops the connection). */
function truncated(res: ServerResponse, streamed: boolean): void {
  if (!streamed) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"msg_local","type":"message","role":"assistant","content":[{"type":"te');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown>) => res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  send({ type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null, usage: USAGE } });
  send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking ' } });
}

/** The goal of a request (its first user message), the number of turns already played and the tools offered. */
export function messagesConversation(request: MessagesRequest): { goal: string; turn: number; tools: string[] } {
  const messages = request.body.messages;
  const first = messages.find((m) => m.role === 'user')?.content;
  return {
    goal: typeof first === 'string' ? first : '',
    turn: messages.filter((m) => m.role === 'assistant').length,
    tools: (request.body.tools ?? []).map((t) => t.name),
  };
}
