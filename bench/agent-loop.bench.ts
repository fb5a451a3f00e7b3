import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV2 } from 'ai/test';
import { z } from 'zod';
import { Agent, AgentModule, AgentRegistry, AgentSpec, ScriptedModelProvider } from '@zmodu/agent';
import { Skill } from '@zmodu/skills';
import { AsyncRun, bytesPerRun, msPerRun } from './measure';
import { Row } from './report';

/** The script both loops play: three tool calls, one per model turn, then a final answer. */
export const GOAL = 'Look up SKU A-100: the item, its price and its stock.';
export const SKU = 'A-100';
export const TOOL_NAMES = ['catalog.item', 'catalog.price', 'catalog.stock'] as const;
export const FINAL_TEXT = 'A-100 is a widget at 9.99, 42 in stock.';
export const TOOLS_PER_RUN = TOOL_NAMES.length;

const SKU_SCHEMA = {
  type: 'object',
  properties: { sku: { type: 'string' } },
  required: ['sku'],
  additionalProperties: false,
} as const;

/** The same trivial in-memory work on both sides. */
export const work = {
  item: (sku: string) => ({ sku, name: 'widget' }),
  price: (sku: string) => ({ sku, price: 9.99, currency: 'EUR' }),
  stock: (sku: string) => ({ sku, inStock: 42 }),
};

// ---------------------------------------------------------------- ours: Agent through AgentModule

@Injectable()
export class CatalogSkills {
  calls = 0;

  @Skill({ name: 'catalog.item', action: 'read', description: 'An item by SKU', parameters: SKU_SCHEMA })
  item(args: { sku: string }) {
    this.calls++;
    return work.item(args.sku);
  }

  @Skill({ name: 'catalog.price', action: 'read', description: 'The price of a SKU', parameters: SKU_SCHEMA })
  price(args: { sku: string }) {
    this.calls++;
    return work.price(args.sku);
  }

  @Skill({ name: 'catalog.stock', action: 'read', description: 'The stock of a SKU', parameters: SKU_SCHEMA })
  stock(args: { sku: string }) {
    this.calls++;
    return work.stock(args.sku);
  }
}

/** The bench agent: the script above, its three tools allowed (the run journal bench runs it too). */
export const AGENT_SPEC: AgentSpec = {
  name: 'bench',
  provider: new ScriptedModelProvider([
    ...TOOL_NAMES.map((name) => ({ toolCalls: [{ name, arguments: { sku: SKU } }] })),
    { text: FINAL_TEXT },
  ]),
  skills: [...TOOL_NAMES],
  guard: { allow: [...TOOL_NAMES], allowExecute: false },
};

@Module({
  imports: [AgentModule.forRoot({ agents: [AGENT_SPEC], guard: { auditStore: 'memory', quotaStore: 'memory' } })],
  providers: [CatalogSkills],
})
class BenchAgentModule {}

async function bootOurs(): Promise<{ app: INestApplicationContext; run: AsyncRun }> {
  const app = await NestFactory.createApplicationContext(BenchAgentModule, { logger: false });
  const agent: Agent = app.get(AgentRegistry).get('bench');
  const skills = app.get(CatalogSkills);
  const run: AsyncRun = async () => {
    const result = await agent.run(GOAL, { tenantId: 't1', userId: 'u1' });
    return result.steps.length;
  };

  // Check once that the loop really does the three calls and ends on the answer.
  const before = skills.calls;
  const result = await agent.run(GOAL, { tenantId: 't1', userId: 'u1' });
  const calls = result.steps.flatMap((s) => s.toolCalls);
  if (result.stoppedReason !== 'final' || result.answer !== FINAL_TEXT || result.steps.length !== TOOLS_PER_RUN + 1)
    throw new Error(
      `zmodu agent did not play the script: ${JSON.stringify({ stoppedReason: result.stoppedReason, answer: result.answer, error: result.error })}`,
    );
  if (calls.length !== TOOLS_PER_RUN || !calls.every((c) => c.ok) || skills.calls - before !== TOOLS_PER_RUN)
    throw new Error(
      `zmodu agent ran ${skills.calls - before} skills: ${JSON.stringify(calls.map((c) => [c.name, c.outcome, c.observation]))}`,
    );
  return { app, run };
}

// ---------------------------------------------------------------- peer: Vercel AI SDK v5 generateText

type DoGenerate = MockLanguageModelV2['doGenerate'];
type CallOptions = Parameters<DoGenerate>[0];
type GenerateResult = Awaited<ReturnType<DoGenerate>>;

const USAGE = { inputTokens: 40, outputTokens: 10, totalTokens: 50 };

/** The mock's doGenerate: the turn played is the number of assistant messages so far (as in ScriptedModelProvider). */
function scriptedGenerate(options: CallOptions): GenerateResult {
  let turn = 0;
  for (const message of options.prompt) if (message.role === 'assistant') turn++;
  if (turn < TOOLS_PER_RUN) {
    return {
      content: [{ type: 'tool-call', toolCallId: `call_${turn + 1}`, toolName: TOOL_NAMES[turn], input: JSON.stringify({ sku: SKU }) }],
      finishReason: 'tool-calls',
      usage: USAGE,
      warnings: [],
    };
  }
  return { content: [{ type: 'text', text: FINAL_TEXT }], finishReason: 'stop', usage: USAGE, warnings: [] };
}

function bootSdk(): { run: AsyncRun; verify: () => Promise<void> } {
  let executions = 0;
  const inputSchema = z.object({ sku: z.string() });
  const tools = {
    'catalog.item': tool({ description: 'An item by SKU', inputSchema, execute: async ({ sku }) => (executions++, work.item(sku)) }),
    'catalog.price': tool({ description: 'The price of a SKU', inputSchema, execute: async ({ sku }) => (executions++, work.price(sku)) }),
    'catalog.stock': tool({ description: 'The stock of a SKU', inputSchema, execute: async ({ sku }) => (executions++, work.stock(sku)) }),
  };
  const model = new MockLanguageModelV2({ doGenerate: async (options) => scriptedGenerate(options) });
  const generate = async () => {
    const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: GOAL });
    // The mock keeps every call's options in doGenerateCalls; drop them so the peer is not slowed by a test artefact.
    model.doGenerateCalls.length = 0;
    return result;
  };
  const run: AsyncRun = async () => (await generate()).steps.length;
  const verify = async () => {
    const before = executions;
    const result = await generate();
    const toolResults = result.steps.flatMap((s) => s.toolResults);
    if (executions - before !== TOOLS_PER_RUN || toolResults.length !== TOOLS_PER_RUN)
      throw new Error(`the AI SDK executed ${executions - before} tools (expected ${TOOLS_PER_RUN})`);
    if (result.text !== FINAL_TEXT || result.steps.length !== TOOLS_PER_RUN + 1)
      throw new Error(`the AI SDK did not play the script: ${result.steps.length} steps, text ${JSON.stringify(result.text)}`);
  };
  return { run, verify };
}

// ---------------------------------------------------------------- the comparison

export interface AgentLoopResult {
  readonly oursMs: number;
  readonly sdkMs: number;
  readonly oursBytes: number;
  readonly sdkBytes: number;
}

export async function runAgentLoopBench(log: (line: string) => void): Promise<{ rows: Row[]; result: AgentLoopResult }> {
  const ours = await bootOurs();
  try {
    const sdk = bootSdk();
    await sdk.verify();
    log('agent loop: both loops run the three tools and end on the final answer');

    const ms = await msPerRun({ ours: ours.run, sdk: sdk.run }, { warmupRounds: 4, rounds: 7, runsPerRound: 300 });
    log(`agent loop: zmodu ${(ms.ours * 1000).toFixed(1)} us/run, AI SDK ${(ms.sdk * 1000).toFixed(1)} us/run`);

    const oursAlloc = await bytesPerRun(ours.run, 200, 7);
    const sdkAlloc = await bytesPerRun(sdk.run, 200, 7);
    for (const [name, a] of [
      ['zmodu', oursAlloc],
      ['AI SDK', sdkAlloc],
    ] as const)
      log(
        `agent loop: ${name} ${(a.bytesPerRun / 1024).toFixed(1)} KB/run ` +
          `(median of ${a.cleanTrials} GC-free batches, ${a.runsPerTrial} runs per batch at the end, ${a.discardedTrials} batches discarded for a GC)`,
      );
    await sdk.verify();

    const result: AgentLoopResult = { oursMs: ms.ours, sdkMs: ms.sdk, oursBytes: oursAlloc.bytesPerRun, sdkBytes: sdkAlloc.bytesPerRun };
    const rows: Row[] = [
      {
        name: 'agent loop, 3 tool calls: zmodu Agent.run vs AI SDK generateText (ratio = zmodu/SDK)',
        value: result.oursMs,
        unit: 'ms/run',
        baseline: result.sdkMs,
        target: { text: 'ratio <= 0.5', met: result.oursMs / result.sdkMs <= 0.5 },
      },
      {
        name: 'agent loop, 3 tool calls: allocated per run, zmodu vs AI SDK (ratio = zmodu/SDK)',
        value: result.oursBytes / 1024,
        unit: 'KB/run',
        baseline: result.sdkBytes / 1024,
        target: { text: 'value <= 100 KB', met: result.oursBytes / 1024 <= 100 },
      },
    ];
    return { rows, result };
  } finally {
    await ours.app.close();
  }
}
