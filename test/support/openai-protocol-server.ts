import { ServerResponse } from 'node:http';
import { FakeTurn, localProtocolServer, LocalProtocolServer, ProtocolFault, ReceivedRequest } from './protocol-faults';

export type { FakeTurn, ProtocolFault } from './protocol-faults';

export type ChatRequest = ReceivedRequest<{
  readonly model: string;
  readonly stream?: boolean;
  readonly stream_options?: unknown;
  readonly messages: ReadonlyArray<{ role: string; content: unknown }>;
  readonly tools?: ReadonlyArray<{ function: { name: string } }>;
}>;

export type OpenAIProtocolServer = LocalProtocolServer<ChatRequest['body']>;

/**
 * A local server speaking OpenAI Chat Completions (POST /v1/chat/completions), as JSON or, with `stream: true`, as
 * Server-Sent Events chunks (shapes from the OpenAI API reference). `play` decides each turn from the request, or a
 * fault to play instead (see ProtocolFault); a promise of either holds the answer until it settles.
 */
export async function openAIProtocolServer(
  play: (request: ChatRequest) => FakeTurn | ProtocolFault | Promise<FakeTurn | ProtocolFault>,
): Promise<OpenAIProtocolServer> {
  return localProtocolServer('/v1', { answer, stream, truncated }, play);
}

const USAGE = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } };
const functionName = (skill: string) => skill.replace(/\./g, '-');

function toolCalls(turn: FakeTurn) {
  return (turn.toolCalls ?? []).map((c, i) => ({
    id: `call_${i + 1}`,
    type: 'function',
    function: { name: functionName(c.name), arguments: c.raw ?? JSON.stringify(c.arguments) },
  }));
}

function answer(res: ServerResponse, turn: FakeTurn): void {
  const calls = toolCalls(turn);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-local',
      object: 'chat.completion',
      created: 1764500000,
      model: 'local',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: turn.text ?? null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: calls.length ? 'tool_calls' : 'stop',
          logprobs: null,
        },
      ],
      usage: USAGE,
    }),
  );
}

/** The start of an answer: the JSON body's first bytes, or the stream's first chunk (the fault then drops the connection). */
function truncated(res: ServerResponse, streamed: boolean): void {
  if (!streamed) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"chatcmpl-local","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const delta = { role: 'assistant', content: 'Checking ' };
  const chunk = {
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1764500000,
    model: 'local',
    choices: [{ index: 0, delta, finish_reason: null }],
  };
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

function stream(res: ServerResponse, turn: FakeTurn): void {
  const chunk = (delta: unknown, finish_reason: string | null = null, choices = true) => ({
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1764500000,
    model: 'local',
    choices: choices ? [{ index: 0, delta, finish_reason, logprobs: null }] : [],
  });
  const send = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  send(chunk({ role: 'assistant', content: '' }));
  const words = turn.text?.match(/\s*\S+\s*/g) ?? [];
  if (turn.hang) return void send(chunk({ content: words[0] ?? '...' }));
  for (const word of words) send(chunk({ content: word }));
  toolCalls(turn).forEach((call, index) => {
    // The id and name first, then the arguments in two pieces, as the API streams them.
    const args = call.function.arguments;
    send(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    send(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 5) } }] }));
    send(chunk({ tool_calls: [{ index, function: { arguments: args.slice(5) } }] }));
  });
  send(chunk({}, turn.toolCalls?.length ? 'tool_calls' : 'stop'));
  send({ ...chunk(null, null, false), usage: USAGE });
  res.end('data: [DONE]\n\n');
}

/** The goal of a request (its first user message) and the number of turns already played. */
export function conversation(request: ChatRequest): { goal: string; turn: number; tools: string[] } {
  const messages = request.body.messages;
  return {
    goal: String(messages.find((m) => m.role === 'user')?.content ?? ''),
    turn: messages.filter((m) => m.role === 'assistant').length,
    tools: (request.body.tools ?? []).map((t) => t.function.name),
  };
}
