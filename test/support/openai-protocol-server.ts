import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One model turn the local server plays: text (streamed a word at a time when asked to stream) and tool calls. */
export interface FakeTurn {
  readonly text?: string;
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: unknown }>;
  /** Stream the first piece of text, then never finish (the client must cut it off). */
  readonly hang?: boolean;
}

export interface ChatRequest {
  readonly body: {
    readonly model: string;
    readonly stream?: boolean;
    readonly stream_options?: unknown;
    readonly messages: ReadonlyArray<{ role: string; content: unknown }>;
    readonly tools?: ReadonlyArray<{ function: { name: string } }>;
  };
  readonly headers: IncomingMessage['headers'];
}

export interface OpenAIProtocolServer {
  readonly url: string;
  readonly requests: ChatRequest[];
  /** Responses the client cut off before they ended. */
  cut(): number;
  close(): Promise<void>;
}

/**
 * A local server speaking OpenAI Chat Completions (POST /v1/chat/completions), as JSON or, with `stream: true`, as
 * Server-Sent Events chunks (shapes from the OpenAI API reference). `play` decides each turn from the request (or
 * returns a promise of it, to hold the answer).
 */
export async function openAIProtocolServer(play: (request: ChatRequest) => FakeTurn | Promise<FakeTurn>): Promise<OpenAIProtocolServer> {
  const requests: ChatRequest[] = [];
  let cut = 0;
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', async () => {
      const request: ChatRequest = { body: JSON.parse(data) as ChatRequest['body'], headers: req.headers };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableEnded) cut++;
      });
      // A turn may be held (a promise): the client waits, as on a slow model, until it settles or the client goes away.
      const turn = await play(request);
      if (res.destroyed) return;
      if (request.body.stream) stream(res, turn);
      else answer(res, turn);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    cut: () => cut,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const USAGE = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } };
const functionName = (skill: string) => skill.replace(/\./g, '-');

function toolCalls(turn: FakeTurn) {
  return (turn.toolCalls ?? []).map((c, i) => ({
    id: `call_${i + 1}`,
    type: 'function',
    function: { name: functionName(c.name), arguments: JSON.stringify(c.arguments) },
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
