import { ServerResponse } from 'node:http';
import { answerText, cutOff, Handler, json, openStream, providerHarness, until, withoutEnv } from '../__fixtures__/model-protocol';
import { AnthropicModelProvider } from './anthropic-model.provider';
import { ModelClientOptions } from './model-client';
import { ModelRequest } from './model-provider';

const message = (content: unknown[], stop_reason: string, usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 5 }) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason,
  stop_sequence: null,
  usage,
});

/** A Messages stream: named events, each `event: <type>` and `data: <json>` (shapes from the Anthropic API reference). */
const send = (res: ServerResponse, ...events: Array<Record<string, unknown>>) =>
  events.forEach((e) => res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`));
const start = (usage: Record<string, unknown>) => ({
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  },
});
const textBlock = (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
const toolBlock = (index: number, id: string, name: string) => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'tool_use', id, name, input: {} },
});
const textDelta = (index: number, text: string) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
const jsonDelta = (index: number, partial_json: string) => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'input_json_delta', partial_json },
});
const stop = (index: number) => ({ type: 'content_block_stop', index });
const end = (stop_reason: string, usage: Record<string, unknown>) => [
  { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage },
  { type: 'message_stop' },
];

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are a test.',
  messages: [{ role: 'user', content: 'quote ACME and GLOBEX' }],
  tools: [{ name: 'market.quote', description: 'Quote', parameters: { type: 'object', properties: { symbol: { type: 'string' } } } }],
  signal: new AbortController().signal,
  ...over,
});

/** The provider with model 'm' and key 'k' against `baseURL`, these options over. */
const anthropic = (baseURL: string, options: Partial<ModelClientOptions> = {}) =>
  new AnthropicModelProvider({ model: 'm', apiKey: 'k', baseURL, ...options });

describe('AnthropicModelProvider (official SDK against a local protocol server)', () => {
  const { serve, failure, afterRetries, abortInFlight, streamFaults } = providerHarness({ basePath: '', make: anthropic, request });

  it('sends the system prompt in its own field and the tools, and reads two tool uses and the usage (cache counted once)', async () => {
    const s = await serve([
      (_b, _r, res) =>
        json(
          res,
          200,
          message(
            [
              { type: 'text', text: 'Quoting both.' },
              { type: 'tool_use', id: 'toolu_1', name: 'market-quote', input: { symbol: 'ACME' } },
              { type: 'tool_use', id: 'toolu_2', name: 'market-quote', input: { symbol: 'GLOBEX' } },
            ],
            'tool_use',
            { input_tokens: 50, output_tokens: 40, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 },
          ),
        ),
    ]);
    const turn = await anthropic(s.url, { model: 'claude-test', maxTokens: 512, temperature: 0 }).complete(request());
    expect(turn.text).toBe('Quoting both.');
    expect(turn.toolCalls).toEqual([
      { id: 'toolu_1', name: 'market.quote', arguments: { symbol: 'ACME' } },
      { id: 'toolu_2', name: 'market.quote', arguments: { symbol: 'GLOBEX' } },
    ]);
    expect(turn.usage).toEqual({ inputTokens: 1250, outputTokens: 40 });
    const { body, headers } = s.requests[0];
    expect(body).toMatchObject({ model: 'claude-test', max_tokens: 512, temperature: 0, system: 'You are a test.' });
    expect(body.messages).toEqual([{ role: 'user', content: 'quote ACME and GLOBEX' }]);
    expect((body.tools as Array<{ name: string; input_schema: unknown }>)[0]).toMatchObject({
      name: 'market-quote',
      input_schema: { type: 'object' },
    });
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(/^(k|Bearer k)$/);
  });

  it('sends tool results of one turn back together, as tool_result blocks of one user message', async () => {
    const s = await serve([(_b, _r, res) => json(res, 200, message([{ type: 'text', text: 'ACME 10, GLOBEX 20.' }], 'end_turn'))]);
    await anthropic(s.url).complete(
      request({
        messages: [
          { role: 'user', content: 'quote' },
          {
            role: 'assistant',
            content: 'Quoting.',
            toolCalls: [
              { id: 'toolu_1', name: 'market.quote', arguments: { symbol: 'ACME' } },
              { id: 'toolu_2', name: 'market.quote', arguments: { symbol: 'GLOBEX' } },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_1', name: 'market.quote', content: '{"price":10}' },
          { role: 'tool', toolCallId: 'toolu_2', name: 'market.quote', content: '{"price":20}' },
        ],
      }),
    );
    expect(s.requests[0].body.messages).toEqual([
      { role: 'user', content: 'quote' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Quoting.' },
          { type: 'tool_use', id: 'toolu_1', name: 'market-quote', input: { symbol: 'ACME' } },
          { type: 'tool_use', id: 'toolu_2', name: 'market-quote', input: { symbol: 'GLOBEX' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"price":10}' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '{"price":20}' },
        ],
      },
    ]);
  });

  it('turns stop_reason "refusal" into a refusal, and retries a 429 (Retry-After) and a 529 before succeeding', async () => {
    const turn = await afterRetries([
      (_b, _r, res) => json(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '1' }),
      (_b, _r, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'overloaded' } }),
      (_b, _r, res) => json(res, 200, message([{ type: 'text', text: 'I will not do that.' }], 'refusal')),
    ]);
    expect(turn).toMatchObject({ refusal: 'I will not do that.', text: '', toolCalls: [] });
  });

  it('aborts a request in flight when the run is aborted, leaving none running', async () => {
    const s = await serve([() => undefined]);
    await abortInFlight(s); // aborted once the server has it in hand
    await until(() => s.cut() >= 1);
    expect(s.cut()).toBe(1);
  });

  it('names itself and the fault: a status after its attempts, an answer that is not JSON, of another shape or types, or cut off', async () => {
    expect(await failure((_b, _r, res) => json(res, 500, { type: 'error', error: { type: 'api_error', message: 'boom' } }), 1)).toEqual([
      'AnthropicModelProvider: the model server answered HTTP 500 (server error, 2 attempts): boom',
      2,
    ]);
    expect(await failure(answerText('{"content": ['))).toEqual([
      expect.stringMatching(/^AnthropicModelProvider: the model server's answer is not valid JSON/),
      1,
    ]);
    const notAnAnswer = /^AnthropicModelProvider: the model server's answer is not a Messages answer \(/;
    for (const text of ['{"hello":"world"}', 'null', '[1]', '{"content":[null]}'])
      expect(await failure(answerText(text))).toEqual([expect.stringMatching(notAnAnswer), 1]);
    expect(await failure(answerText('<html>Bad gateway</html>', 'text/html'))).toEqual([expect.stringMatching(notAnAnswer), 1]);
    expect(await failure((_b, _r, res) => json(res, 200, message([{ type: 'text', text: { not: 'text' } }], 'end_turn')))).toEqual([
      "AnthropicModelProvider: the model server's answer is not a Messages answer (a text block whose text is not a string)",
      1,
    ]);
    expect(await failure(cutOff('{"id":"msg_1","type":"message","content":[{"ty'))).toEqual([
      expect.stringMatching(/^AnthropicModelProvider: the connection to the model server was cut off/),
      1,
    ]);
  });

  describe('streaming (onTextDelta)', () => {
    it('streams the answer: deltas in order as they arrive, usage from message_start and message_delta with the cache counted once', async () => {
      let firstSeen!: () => void;
      const seen = new Promise<void>((resolve) => (firstSeen = resolve));
      const s = await serve([
        (_b, _r, res) => {
          openStream(res);
          send(
            res,
            start({ input_tokens: 50, output_tokens: 1, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 }),
            textBlock(0),
            { type: 'ping' },
            textDelta(0, 'ACME '),
          );
          // The rest only once the client has the first delta: a provider that waited for the whole body would hang here.
          void seen.then(() => {
            send(res, textDelta(0, 'trades '), textDelta(0, 'at 101.25.'), stop(0), ...end('end_turn', { output_tokens: 9 }));
            res.end();
          });
        },
      ]);
      const deltas: string[] = [];
      const turn = await anthropic(s.url, { model: 'claude-test' }).complete(
        request({ onTextDelta: (d) => (deltas.push(d), firstSeen()) }),
      );
      expect(deltas).toEqual(['ACME ', 'trades ', 'at 101.25.']);
      expect(turn).toEqual({ text: 'ACME trades at 101.25.', toolCalls: [], usage: { inputTokens: 1250, outputTokens: 9 } });
      expect(s.requests[0].body).toMatchObject({ model: 'claude-test', stream: true, system: 'You are a test.' });
    });

    it('gathers two parallel tool uses from their input_json_delta pieces, and returns malformed input raw', async () => {
      const s = await serve([
        (_b, _r, res) => {
          openStream(res);
          send(
            res,
            start({ input_tokens: 30, output_tokens: 1 }),
            textBlock(0),
            textDelta(0, 'Quoting both.'),
            stop(0),
            toolBlock(1, 'toolu_1', 'market-quote'),
            jsonDelta(1, ''),
            jsonDelta(1, '{"symbol": "AC'),
            jsonDelta(1, 'ME"}'),
            stop(1),
            toolBlock(2, 'toolu_2', 'market-quote'),
            jsonDelta(2, '{"symbol":"GLOBEX"}'),
            stop(2),
            toolBlock(3, 'toolu_3', 'market-quote'),
            jsonDelta(3, '{"symbol": '),
            stop(3),
            ...end('tool_use', { output_tokens: 60, input_tokens: 30, cache_read_input_tokens: 100 }),
          );
          res.end();
        },
      ]);
      const deltas: string[] = [];
      const turn = await anthropic(s.url).complete(request({ onTextDelta: (d) => deltas.push(d) }));
      expect(deltas).toEqual(['Quoting both.']);
      expect(turn.text).toBe('Quoting both.');
      expect(turn.toolCalls).toEqual([
        { id: 'toolu_1', name: 'market.quote', arguments: { symbol: 'ACME' } },
        { id: 'toolu_2', name: 'market.quote', arguments: { symbol: 'GLOBEX' } },
        { id: 'toolu_3', name: 'market.quote', arguments: '{"symbol": ' },
      ]);
      // message_delta's counts are cumulative: they replace message_start's, the cache read counted once.
      expect(turn.usage).toEqual({ inputTokens: 130, outputTokens: 60 });
    });

    it('turns a streamed stop_reason "refusal" into a refusal', async () => {
      const s = await serve([
        (_b, _r, res) => {
          openStream(res);
          send(
            res,
            start({ input_tokens: 5, output_tokens: 1 }),
            textBlock(0),
            textDelta(0, 'I will not.'),
            stop(0),
            ...end('refusal', { output_tokens: 3 }),
          );
          res.end();
        },
      ]);
      const turn = await anthropic(s.url).complete(request({ onTextDelta: () => undefined }));
      expect(turn).toMatchObject({ text: '', refusal: 'I will not.', toolCalls: [] });
    });

    it('aborts a stream in mid-answer, cuts off one that goes quiet (timeoutMs), and refuses one that ends early: no request left running', async () => {
      const started: Handler = (_b, _r, res) => {
        openStream(res);
        send(res, start({ input_tokens: 5, output_tokens: 1 }), textBlock(0), textDelta(0, 'Thinking'));
      };
      await streamFaults(started);
    });
  });

  it('needs a model and a key, saying where they come from', () => {
    withoutEnv('ANTHROPIC_API_KEY', () => {
      expect(() => new AnthropicModelProvider({ model: ' ' })).toThrow(/options\.model/);
      expect(() => new AnthropicModelProvider({ model: 'm' })).toThrow(/ANTHROPIC_API_KEY/);
    });
  });
});
