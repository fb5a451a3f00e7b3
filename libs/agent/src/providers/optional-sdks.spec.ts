import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Test } from '@nestjs/testing';
import { OptionalPeerUnavailableException } from '@zmodu/core';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { AgentModule } from '../agent.module';
import { AgentRegistry } from '../agent.registry';
import { AnthropicModelProvider } from './anthropic-model.provider';
import { ModelProvider } from './model-provider';
import { OpenAIModelProvider } from './openai-model.provider';

/**
 * `openai` and `@anthropic-ai/sdk` are optional peers of @zmodu/agent: importing it loads neither, a provider loads
 * its SDK when it is built (where the application configures its model, so at boot), and without it the boot fails
 * naming the package to install. "Without it" is simulated (simulateMissingPeers), the packages stay installed.
 */

/** A local server answering one Chat Completions or Messages request with the text "pong" (the wire shapes of each API). */
async function modelServer(): Promise<{ url: string; paths: string[]; server: Server }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.endsWith('/chat/completions'))
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1764500000,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'pong', refusal: null }, finish_reason: 'stop', logprobs: null }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      else
        res.end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'm',
            content: [{ type: 'text', text: 'pong' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 3, output_tokens: 1 },
          }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, server };
}

/** An application that configures one agent on the provider `make` builds, in AgentModule's factory (at boot). */
const boot = (make: () => ModelProvider) =>
  Test.createTestingModule({
    imports: [
      AgentModule.forRootAsync({
        useFactory: () => ({ agents: [{ name: 'pinger', provider: make(), skills: [], guard: { allow: [] } }] }),
        guard: { auditStore: 'memory', quotaStore: 'memory' },
      }),
    ],
  }).compile();

const CASES = [
  {
    provider: 'OpenAI',
    packageName: 'openai',
    message: 'the OpenAI provider needs the openai package: npm install openai@^7',
    make: (url: string) => new OpenAIModelProvider({ model: 'm', apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0 }),
    path: '/v1/chat/completions',
  },
  {
    provider: 'Anthropic',
    packageName: '@anthropic-ai/sdk',
    message: 'the Anthropic provider needs the @anthropic-ai/sdk package: npm install @anthropic-ai/sdk@^1',
    make: (url: string) => new AnthropicModelProvider({ model: 'm', apiKey: 'k', baseURL: url, maxRetries: 0 }),
    path: '/v1/messages',
  },
] as const;

describe('the model SDKs are optional peers of @zmodu/agent', () => {
  let model: Awaited<ReturnType<typeof modelServer>>;

  beforeAll(async () => {
    model = await modelServer();
  });

  afterAll(async () => {
    model.server.closeAllConnections();
    await new Promise((resolve) => model.server.close(resolve));
  });

  it('importing @zmodu/agent loads neither SDK (each would throw if it were required)', () => {
    let loaded: Record<string, unknown> = {};
    jest.isolateModules(() => {
      jest.doMock('openai', () => {
        throw new Error('openai was required at import');
      });
      jest.doMock('@anthropic-ai/sdk', () => {
        throw new Error('@anthropic-ai/sdk was required at import');
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('@zmodu/agent') as Record<string, unknown>;
    });
    jest.dontMock('openai');
    jest.dontMock('@anthropic-ai/sdk');
    expect(typeof loaded.OpenAIModelProvider).toBe('function');
    expect(typeof loaded.AnthropicModelProvider).toBe('function');
    expect(typeof loaded.AgentModule).toBe('function');
  });

  for (const c of CASES) {
    describe(`the ${c.provider} provider`, () => {
      it(`without ${c.packageName}, the boot fails naming the package to install`, async () => {
        const restore = simulateMissingPeers(c.packageName);
        let thrown: unknown;
        try {
          await boot(() => c.make(model.url)).then((app) => app.close());
        } catch (err) {
          thrown = err;
        } finally {
          restore();
        }
        expect(thrown).toBeInstanceOf(OptionalPeerUnavailableException);
        expect((thrown as Error).message).toBe(c.message);
        expect(thrown).toMatchObject({ packageName: c.packageName, missing: true });
      });

      it('without the other SDK, it boots and answers through its own', async () => {
        const other = CASES.find((o) => o !== c)!;
        const restore = simulateMissingPeers(other.packageName);
        try {
          const app = await boot(() => c.make(model.url));
          await app.init();
          const before = model.paths.length;
          const result = await app.get(AgentRegistry).get('pinger').run('ping', { tenantId: 't1', userId: 'u1' });
          expect(result).toMatchObject({ answer: 'pong', stoppedReason: 'final' });
          expect(model.paths.slice(before)).toEqual([c.path]);
          await app.close();
        } finally {
          restore();
        }
      });
    });
  }
});
