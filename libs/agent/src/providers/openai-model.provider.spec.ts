import { ServerResponse } from 'node:http';
import { answerText, cutOff, Handler, json, openStream, providerHarness, until, withoutEnv } from '../__fixtures__/model-protocol';
import { ModelClientOptions } from './model-client';
import { ModelRequest } from './model-provider';
import { OpenAIModelProvider } from './openai-model.provider';
import { fromFunctionName, toFunctionName } from './tool-names';

const completion = (
  message: Record<string, unknown>,
  usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1764500000,
  model: 'test-model',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', refusal: null, ...message },
      finish_reason: message.tool_calls ? 'tool_calls' : 'stop',
      logprobs: null,
    },
  ],
  usage,
});

/** A Chat Completions stream: one `data:` line per chunk (shapes from the OpenAI API reference), then `data: [DONE]`. */
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1764500000,
  model: 'test-model',
  choices: [{ index: 0, delta, finish_reason, logprobs: null }],
});
/** With stream_options.include_usage, the last chunk has no choices and the usage of the whole request. */
const usageChunk = (usage: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1764500000,
  model: 'test-model',
  choices: [],
  usage,
});
const send = (res: ServerResponse, ...chunks: unknown[]) => chunks.forEach((c) => res.write(`data: ${JSON.stringify(c)}\n\n`));
const finish = (res: ServerResponse, chunks: unknown[]) => {
  send(res, ...chunks);
  res.end('data: [DONE]\n\n');
};
const sse = (res: ServerResponse, chunks: unknown[]) => {
  openStream(res);
  finish(res, chunks);
};

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are a test.',
  messages: [{ role: 'user', content: 'quote ACME and draft an order' }],
  tools: [
    { name: 'market.quote', description: 'Quote', parameters: { type: 'object', properties: { symbol: { type: 'string' } } } },
    { name: 'market_quote', description: 'Another', parameters: { type: 'object', properties: {} } },
    { name: 'order.draft', description: 'Draft', parameters: { type: 'object', properties: {} } },
  ],
  signal: new AbortController().signal,
  ...over,
});

/** The provider with model 'm' and key 'k' against `baseURL`, these options over. */
const openai = (baseURL: string, options: Partial<ModelClientOptions> = {}) =>
  new OpenAIModelProvider({ model: 'm', apiKey: 'k', baseURL, ...options });

describe('OpenAIModelProvider (official SDK against a local protocol server)', () => {
  const { serve, failure, afterRetries, abortInFlight, streamFaults } = providerHarness({ basePath: '/v1', make: openai, request });

  it('maps skill names to function names one-to-one, so names differing only in . and _ stay apart', () => {
    for (const name of ['market.quote', 'market_quote', 'a.b_c.d', 'a_b.c_d']) expect(fromFunctionName(toFunctionName(name))).toBe(name);
    expect(toFunctionName('market.quote')).not.toBe(toFunctionName('market_quote'));
    expect(toFunctionName('order.draft')).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('sends the tools and the system prompt, and reads two parallel tool calls and the usage (cached input counted once)', async () => {
    const s = await serve([
      (_body, _req, res) =>
        json(
          res,
          200,
          completion(
            {
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'market-quote', arguments: '{"symbol":"ACME"}' } },
                { id: 'call_2', type: 'function', function: { name: 'market_quote', arguments: '{}' } },
              ],
            },
            { prompt_tokens: 1200, completion_tokens: 30, total_tokens: 1230, prompt_tokens_details: { cached_tokens: 1000 } },
          ),
        ),
    ]);
    const provider = openai(s.url, { model: 'test-model', temperature: 0.2, maxTokens: 300 });
    const turn = await provider.complete(request());
    expect(turn.toolCalls).toEqual([
      { id: 'call_1', name: 'market.quote', arguments: { symbol: 'ACME' } },
      { id: 'call_2', name: 'market_quote', arguments: {} },
    ]);
    expect(turn.usage).toEqual({ inputTokens: 1200, outputTokens: 30 });
    const sent = s.requests[0].body;
    expect(sent).toMatchObject({ model: 'test-model', temperature: 0.2, max_completion_tokens: 300, parallel_tool_calls: true });
    expect((sent.messages as Array<{ role: string; content: string }>)[0]).toEqual({ role: 'system', content: 'You are a test.' });
    expect((sent.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual([
      'market-quote',
      'market_quote',
      'order-draft',
    ]);
  });

  it('returns a malformed argument string as the raw text (the agent answers it as a tool error)', async () => {
    const s = await serve([
      (_b, _r, res) =>
        json(
          res,
          200,
          completion({
            content: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'order-draft', arguments: '{"qty": 1' } }],
          }),
        ),
    ]);
    const turn = await openai(s.url).complete(request());
    expect(turn.toolCalls).toEqual([{ id: 'c', name: 'order.draft', arguments: '{"qty": 1' }]);
  });

  it('retries a 429 after its Retry-After, and a 500, then succeeds', async () => {
    const turn = await afterRetries([
      (_b, _r, res) => json(res, 429, { error: { message: 'slow down', type: 'rate_limit_error' } }, { 'retry-after': '1' }),
      (_b, _r, res) => json(res, 500, { error: { message: 'boom', type: 'server_error' } }),
      (_b, _r, res) => json(res, 200, completion({ content: 'done' })),
    ]);
    expect(turn.text).toBe('done');
  });

  it('gives up after maxRetries, answering the error', async () => {
    const s = await serve([(_b, _r, res) => json(res, 503, { error: { message: 'down', type: 'server_error' } })]);
    await expect(openai(s.url, { maxRetries: 1 }).complete(request())).rejects.toThrow(/503/);
    expect(s.requests).toHaveLength(2);
  });

  it('times out a request that does not answer, and aborts one in flight when the run is aborted (no request left running)', async () => {
    const hang: Handler = () => undefined;
    const s = await serve([hang]);
    const slow = openai(s.url, { timeoutMs: 300, maxRetries: 0 });
    // The server never answers: only the timeout ends these calls (jest's test timeout is the hang guard).
    // Told as a timeout, also under jest (where the fetch's AbortError comes from another realm and the SDK reports
    // a connection error): the request took its whole timeout.
    await expect(slow.complete(request())).rejects.toThrow(
      'OpenAIModelProvider: the model server did not answer within 300 ms (timeoutMs), 1 attempt',
    );
    await abortInFlight(s); // aborted once the server has it in hand
    expect(s.requests).toHaveLength(2); // neither was retried
    await until(() => s.cut() === 2);
    expect(s.cut()).toBe(2); // both requests were cut off at the server, none left running
  });

  it('names itself and the fault: a status after its attempts, an answer that is not JSON, of another shape or types, or cut off', async () => {
    expect(await failure((_b, _r, res) => json(res, 500, { error: { message: 'boom', type: 'server_error' } }), 1)).toEqual([
      'OpenAIModelProvider: the model server answered HTTP 500 (server error, 2 attempts): boom',
      2,
    ]);
    expect(await failure(answerText('{"choices": ['))).toEqual([
      expect.stringMatching(/^OpenAIModelProvider: the model server's answer is not valid JSON/),
      1,
    ]);
    const notAnAnswer = /^OpenAIModelProvider: the model server's answer is not a Chat Completions answer \(/;
    for (const text of ['{"hello":"world"}', 'null', '[1]', '{"choices":[{}]}'])
      expect(await failure(answerText(text))).toEqual([expect.stringMatching(notAnAnswer), 1]);
    expect(await failure(answerText('<html>Bad gateway</html>', 'text/html'))).toEqual([expect.stringMatching(notAnAnswer), 1]);
    expect(await failure((_b, _r, res) => json(res, 200, completion({ content: 42 })))).toEqual([
      "OpenAIModelProvider: the model server's answer is not a Chat Completions answer (message.content is not a string)",
      1,
    ]);
    const badCall = { id: 'c', type: 'function', function: { name: 5, arguments: '{}' } };
    expect(await failure((_b, _r, res) => json(res, 200, completion({ content: null, tool_calls: [badCall] })))).toEqual([
      expect.stringMatching(notAnAnswer),
      1,
    ]);
    expect(await failure(cutOff('{"id":"chatcmpl-1","choices":[{"ind'))).toEqual([
      expect.stringMatching(/^OpenAIModelProvider: the connection to the model server was cut off/),
      1,
    ]);
  });

  it("quotes at most 200 redacted characters of the server's first line: not its key, not its traceback (attack: a proxy answers 500 with the key and a traceback)", async () => {
    const key = 'proxy-Qz81mW4nB7vX2cL9tR5y';
    const s = await serve([
      (_b, _r, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`upstream refused ${key} ${'x'.repeat(500)}\nTraceback (most recent call last):\n  File "/srv/app.py", line 3\n`);
      },
    ]);
    const err = await openai(s.url, { apiKey: key, maxRetries: 0 })
      .complete(request())
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(err?.message).toMatch(
      /^OpenAIModelProvider: the model server answered HTTP 500 \(server error, 1 attempt\): upstream refused \[redacted\] x+…$/,
    );
    expect(err!.message.length).toBeLessThan(300);
    expect(err!.message).not.toContain('Traceback');
    // Nothing of the body behind the message either: the SDK's error (which holds it) is not kept as the cause.
    expect(err!.cause).toBeUndefined();
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(key);
  });

  describe('streaming (onTextDelta)', () => {
    it('streams the answer: deltas in order as they arrive, the same turn as without streaming, usage with cached tokens counted once', async () => {
      let firstSeen!: () => void;
      const seen = new Promise<void>((resolve) => (firstSeen = resolve));
      const s = await serve([
        (_b, _r, res) => {
          openStream(res);
          send(res, chunk({ role: 'assistant', content: '', refusal: null }), chunk({ content: 'ACME ' }));
          // The rest only once the client has the first delta: a provider that waited for the whole body would hang here.
          void seen.then(() =>
            finish(res, [
              chunk({ content: 'trades ' }),
              chunk({ content: 'at 101.25.' }),
              chunk({}, 'stop'),
              usageChunk({ prompt_tokens: 1200, completion_tokens: 7, total_tokens: 1207, prompt_tokens_details: { cached_tokens: 1000 } }),
            ]),
          );
        },
      ]);
      const deltas: string[] = [];
      const turn = await openai(s.url, { model: 'test-model' }).complete({
        ...request(),
        onTextDelta: (d) => (deltas.push(d), firstSeen()),
      });
      expect(deltas).toEqual(['ACME ', 'trades ', 'at 101.25.']);
      expect(turn).toEqual({ text: 'ACME trades at 101.25.', toolCalls: [], usage: { inputTokens: 1200, outputTokens: 7 } });
      expect(s.requests[0].body).toMatchObject({
        model: 'test-model',
        stream: true,
        stream_options: { include_usage: true },
        parallel_tool_calls: true,
      });
    });

    it('gathers two parallel tool calls from their pieces by index (interleaved), and returns malformed arguments raw', async () => {
      const s = await serve([
        (_b, _r, res) =>
          sse(res, [
            chunk({ role: 'assistant', content: null }),
            chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'market-quote', arguments: '' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"sym' } }] }),
            chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'order-draft', arguments: '{"qty":' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'bol":"ACME"}' } }] }),
            chunk({ tool_calls: [{ index: 1, function: { arguments: ' 1' } }] }),
            chunk({ tool_calls: [{ index: 2, id: 'call_3', type: 'function', function: { name: 'market_quote', arguments: '{}' } }] }),
            chunk({}, 'tool_calls'),
            usageChunk({ prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 }),
          ]),
      ]);
      const deltas: string[] = [];
      const turn = await openai(s.url).complete({
        ...request(),
        onTextDelta: (d) => deltas.push(d),
      });
      expect(turn.toolCalls).toEqual([
        { id: 'call_1', name: 'market.quote', arguments: { symbol: 'ACME' } },
        { id: 'call_2', name: 'order.draft', arguments: '{"qty": 1' },
        { id: 'call_3', name: 'market_quote', arguments: {} },
      ]);
      expect(turn.text).toBe('');
      expect(deltas).toEqual([]);
      expect(turn.usage).toEqual({ inputTokens: 40, outputTokens: 30 });
    });

    it('keeps calls apart when a server sends pieces without an index (a new id starts a call), and refuses a bad index or a nameless call', async () => {
      const piece = (p: Record<string, unknown>) => chunk({ tool_calls: [{ type: 'function', ...p }] });
      const s = await serve([
        (_b, _r, res) =>
          sse(res, [
            piece({ id: 'a', function: { name: 'market-quote', arguments: '{"symbol":' } }),
            piece({ function: { arguments: '"ACME"}' } }),
            piece({ id: 'b', function: { name: 'order-draft', arguments: '{}' } }),
            chunk({}, 'tool_calls'),
          ]),
        (_b, _r, res) =>
          sse(res, [piece({ index: -1, id: 'c', function: { name: 'market-quote', arguments: '{}' } }), chunk({}, 'tool_calls')]),
        (_b, _r, res) =>
          sse(res, [piece({ index: 2 ** 53 - 1, id: 'c', function: { name: 'x', arguments: '{}' } }), chunk({}, 'tool_calls')]),
        (_b, _r, res) => sse(res, [piece({ function: { arguments: '{}' } }), chunk({}, 'tool_calls')]),
        (_b, _r, res) => sse(res, [piece({ index: 0, id: 'd', function: { arguments: '{}' } }), chunk({}, 'tool_calls')]),
      ]);
      const provider = openai(s.url, { maxRetries: 0 });
      const streamed = () => provider.complete({ ...request(), onTextDelta: () => undefined });
      expect((await streamed()).toolCalls).toEqual([
        { id: 'a', name: 'market.quote', arguments: { symbol: 'ACME' } },
        { id: 'b', name: 'order.draft', arguments: {} },
      ]);
      await expect(streamed()).rejects.toThrow(/tool-call piece with index -1/);
      await expect(streamed()).rejects.toThrow(/tool-call piece with index 9007199254740991/);
      await expect(streamed()).rejects.toThrow(/neither an index nor an id/);
      await expect(streamed()).rejects.toThrow(/tool call that has no function name/);
    });

    it('gathers a streamed refusal (refusal deltas) into the turn, not into the text', async () => {
      const s = await serve([
        (_b, _r, res) =>
          sse(res, [
            chunk({ role: 'assistant', content: null, refusal: '' }),
            chunk({ refusal: 'I cannot ' }),
            chunk({ refusal: 'help with that.' }),
            chunk({}, 'stop'),
            usageChunk({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 }),
          ]),
      ]);
      const deltas: string[] = [];
      const turn = await openai(s.url).complete({
        ...request(),
        onTextDelta: (d) => deltas.push(d),
      });
      expect(turn).toMatchObject({ text: '', refusal: 'I cannot help with that.', toolCalls: [] });
      expect(deltas).toEqual([]);
    });

    it('aborts a stream in mid-answer, cuts off one that goes quiet (timeoutMs), and refuses one that ends early: no request left running', async () => {
      const started: Handler = (_b, _r, res) => {
        openStream(res);
        send(res, chunk({ role: 'assistant', content: 'Thinking' }));
      };
      await streamFaults(started);
    });
  });

  it('needs a model and a key, saying where they come from', () => {
    withoutEnv('OPENAI_API_KEY', () => {
      expect(() => new OpenAIModelProvider({ model: '' })).toThrow(/options\.model/);
      expect(() => new OpenAIModelProvider({ model: 'm' })).toThrow(/OPENAI_API_KEY/);
    });
  });
});
