import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { Agent, AgentModule, AgentRegistry, OpenAIModelProvider } from '@zmodu/agent';
import { toFunctionName } from '@zmodu/agent/internal';
import { CatalogSkills, FINAL_TEXT, GOAL, SKU, TOOL_NAMES, TOOLS_PER_RUN, work } from './agent-loop.bench';
import { AsyncRun, bytesPerRun, msPerRun } from './measure';
import { Row } from './report';

/**
 * The agent loop over a real model client: our Agent with OpenAIModelProvider (the official `openai` SDK) and
 * the AI SDK's generateText with @ai-sdk/openai's Chat Completions model, both against one local server that
 * speaks Chat Completions and answers at once (no model latency). The script is the in-memory bench's: three
 * tool calls, one per turn, then the answer. The overhead of a loop is its time per run minus the floor: the
 * same four requests (the bodies our provider sent) posted with plain fetch and their JSON read.
 */

/** Function names on the wire: the same for both loops (ours maps `catalog.item` to `catalog-item` and back). */
const WIRE_NAMES = TOOL_NAMES.map(toFunctionName);

interface ChatBody {
  readonly messages: ReadonlyArray<{ readonly role: string }>;
}

/** A Chat Completions server that plays the script: the turn is the number of assistant messages so far. */
async function startServer(): Promise<{ server: Server; baseURL: string; requests: string[]; record: (on: boolean) => void }> {
  const requests: string[] = [];
  let recording = false;
  let id = 0;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (recording) requests.push(raw);
      const body = JSON.parse(raw) as ChatBody;
      const turn = body.messages.filter((m) => m.role === 'assistant').length;
      const message =
        turn < TOOLS_PER_RUN
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: `call_${++id}`, type: 'function', function: { name: WIRE_NAMES[turn], arguments: JSON.stringify({ sku: SKU }) } },
              ],
            }
          : { role: 'assistant', content: FINAL_TEXT };
      const payload = JSON.stringify({
        id: `chatcmpl-${id}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'bench-model',
        choices: [{ index: 0, message, finish_reason: turn < TOOLS_PER_RUN ? 'tool_calls' : 'stop', logprobs: null }],
        usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, baseURL: `http://127.0.0.1:${port}/v1`, requests, record: (on) => (recording = on) };
}

function benchModule(baseURL: string): DynamicModule {
  @Module({})
  class ProviderBenchModule {}
  const provider = new OpenAIModelProvider({ model: 'bench-model', apiKey: 'bench-key', baseURL, maxRetries: 0 });
  return {
    module: ProviderBenchModule,
    imports: [
      AgentModule.forRoot({
        agents: [{ name: 'bench', provider, skills: [...TOOL_NAMES], guard: { allow: [...TOOL_NAMES], allowExecute: false } }],
        guard: { auditStore: 'memory', quotaStore: 'memory' },
      }),
    ],
    providers: [CatalogSkills],
  };
}

async function bootOurs(baseURL: string): Promise<{ app: INestApplicationContext; run: AsyncRun; verify: () => Promise<void> }> {
  const app = await NestFactory.createApplicationContext(benchModule(baseURL), { logger: false });
  const agent: Agent = app.get(AgentRegistry).get('bench');
  const skills = app.get(CatalogSkills);
  const run: AsyncRun = async () => (await agent.run(GOAL, { tenantId: 't1', userId: 'u1' })).steps.length;
  const verify = async () => {
    const before = skills.calls;
    const result = await agent.run(GOAL, { tenantId: 't1', userId: 'u1' });
    const calls = result.steps.flatMap((s) => s.toolCalls);
    if (result.stoppedReason !== 'final' || result.answer !== FINAL_TEXT || result.steps.length !== TOOLS_PER_RUN + 1)
      throw new Error(`zmodu over OpenAIModelProvider did not play the script: ${JSON.stringify({ ...result, steps: undefined })}`);
    if (calls.length !== TOOLS_PER_RUN || !calls.every((c) => c.ok) || skills.calls - before !== TOOLS_PER_RUN)
      throw new Error(`zmodu over OpenAIModelProvider ran ${skills.calls - before} skills: ${JSON.stringify(calls)}`);
  };
  return { app, run, verify };
}

function bootSdk(baseURL: string): { run: AsyncRun; verify: () => Promise<void> } {
  let executions = 0;
  const inputSchema = z.object({ sku: z.string() });
  const describe = ['An item by SKU', 'The price of a SKU', 'The stock of a SKU'];
  const execute = [work.item, work.price, work.stock];
  const tools = Object.fromEntries(
    WIRE_NAMES.map((name, i) => [
      name,
      tool({ description: describe[i], inputSchema, execute: async ({ sku }: { sku: string }) => (executions++, execute[i](sku)) }),
    ]),
  );
  const model = createOpenAI({ baseURL, apiKey: 'bench-key' }).chat('bench-model');
  const generate = () => generateText({ model, tools, stopWhen: stepCountIs(5), prompt: GOAL, maxRetries: 0 });
  const run: AsyncRun = async () => (await generate()).steps.length;
  const verify = async () => {
    const before = executions;
    const result = await generate();
    if (executions - before !== TOOLS_PER_RUN || result.text !== FINAL_TEXT || result.steps.length !== TOOLS_PER_RUN + 1)
      throw new Error(`the AI SDK did not play the script: ${executions - before} tools, ${result.steps.length} steps, ${result.text}`);
  };
  return { run, verify };
}

/** The floor: the four requests of one run, posted with plain fetch, each response read as JSON. */
function floorRun(baseURL: string, bodies: readonly string[]): AsyncRun {
  const url = `${baseURL}/chat/completions`;
  return async () => {
    let n = 0;
    for (const body of bodies) {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      n += ((await response.json()) as { choices: unknown[] }).choices.length;
    }
    return n;
  };
}

export interface ProviderLoopResult {
  readonly oursMs: number;
  readonly sdkMs: number;
  readonly floorMs: number;
  readonly oursBytes: number;
  readonly sdkBytes: number;
}

export async function runProviderLoopBench(log: (line: string) => void): Promise<{ rows: Row[]; result: ProviderLoopResult }> {
  const { server, baseURL, requests, record } = await startServer();
  const ours = await bootOurs(baseURL);
  try {
    const sdk = bootSdk(baseURL);
    record(true);
    await ours.verify();
    record(false);
    await sdk.verify();
    if (requests.length !== TOOLS_PER_RUN + 1) throw new Error(`expected ${TOOLS_PER_RUN + 1} requests per run, saw ${requests.length}`);
    const floor = floorRun(baseURL, requests.splice(0));
    log('provider loop: both loops run the three tools over the local Chat Completions server and end on the answer');

    const ms = await msPerRun({ ours: ours.run, sdk: sdk.run, floor }, { warmupRounds: 3, rounds: 7, runsPerRound: 60 });
    const overhead = { ours: ms.ours - ms.floor, sdk: ms.sdk - ms.floor };
    log(
      `provider loop: zmodu ${ms.ours.toFixed(3)} ms/run, AI SDK ${ms.sdk.toFixed(3)} ms/run, floor (4 plain fetches) ${ms.floor.toFixed(3)} ms/run; ` +
        `overhead zmodu ${overhead.ours.toFixed(3)} ms, AI SDK ${overhead.sdk.toFixed(3)} ms`,
    );
    const oursAlloc = await bytesPerRun(ours.run, 50, 7);
    const sdkAlloc = await bytesPerRun(sdk.run, 50, 7);
    log(
      `provider loop: allocated zmodu ${(oursAlloc.bytesPerRun / 1024).toFixed(1)} KB/run, AI SDK ${(sdkAlloc.bytesPerRun / 1024).toFixed(1)} KB/run`,
    );
    await ours.verify();
    await sdk.verify();

    const result: ProviderLoopResult = {
      oursMs: ms.ours,
      sdkMs: ms.sdk,
      floorMs: ms.floor,
      oursBytes: oursAlloc.bytesPerRun,
      sdkBytes: sdkAlloc.bytesPerRun,
    };
    const rows: Row[] = [
      {
        name: 'agent loop over OpenAI provider, local server: overhead above 4 plain fetches, zmodu vs AI SDK generateText (ratio = zmodu/SDK)',
        value: overhead.ours,
        unit: 'ms/run',
        baseline: overhead.sdk,
        target: { text: 'ratio <= 0.5', met: overhead.ours / overhead.sdk <= 0.5 },
        note: `total ${ms.ours.toFixed(2)} vs ${ms.sdk.toFixed(2)} ms/run, floor ${ms.floor.toFixed(2)}`,
      },
      {
        name: 'agent loop over OpenAI provider, local server: allocated per run, zmodu vs AI SDK (ratio = zmodu/SDK)',
        value: result.oursBytes / 1024,
        unit: 'KB/run',
        baseline: result.sdkBytes / 1024,
        target: { text: 'ratio <= 1', met: result.oursBytes <= result.sdkBytes },
      },
    ];
    return { rows, result };
  } finally {
    await ours.app.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  }
}
