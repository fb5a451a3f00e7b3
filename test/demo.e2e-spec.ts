import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicModelProvider, OpenAIModelProvider } from '@zmodu/agent';
import { modelFromEnv } from '../apps/sample/src/model';
import { MODEL_VARS } from './support/model-env';
import { conversation, openAIProtocolServer } from './support/openai-protocol-server';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', 'scripts', 'register-ts.js');

const ROOT = join(__dirname, '..');
/** `npm run demo` from its sources, on a data folder of its own; resolves with its exit code and output. */
async function demo(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'zmodu-demo-'));
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => ![...MODEL_VARS, 'DATABASE_URL', 'ZMODU_JWT_SECRET'].includes(k)),
  ) as Record<string, string>;
  try {
    const child = spawn(process.execPath, ['-r', REGISTER_TS, 'apps/sample/src/main.ts', 'demo'], {
      cwd: ROOT,
      env: { ...base, ZMODU_DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { code, stdout, stderr };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('npm run demo', () => {
  // Each case starts the demo from its sources and boots the sample: a minute or more on a loaded machine.
  jest.setTimeout(240_000);

  it('runs on a real model when the variables are set (the official SDK against a local OpenAI-protocol server), says so, and prints what happened', async () => {
    const key = 'sk-demo-key-never-printed';
    // A model of its own mind: it quotes whatever it is asked about, then answers, proposing nothing.
    const model = await openAIProtocolServer((r) => {
      const { turn, tools } = conversation(r);
      return turn === 0 && tools.includes('market-quote')
        ? { text: 'Checking the price.', toolCalls: [{ name: 'market.quote', arguments: { symbol: 'ACME' } }] }
        : { text: 'I looked at the price and placed nothing.' };
    });
    try {
      const run = await demo({ OPENAI_API_KEY: key, OPENAI_BASE_URL: model.url, ZMODU_MODEL: 'local-model' });
      const lines = run.stdout.split('\n');
      expect(lines[0]).toBe(
        `zmodu for NestJS: demo on a real model; model: OpenAI-compatible (Chat Completions) "local-model" at ${model.url}`,
      );
      expect(run.stdout + run.stderr).not.toContain(key);
      // Not the script's outcome: what the model did.
      expect(run.stdout).not.toMatch(/part [12] complete|did NOT go as expected/);
      expect(run.stdout).toContain('part 1 on the real model: the run ended final after 2 model turns; 1 tool calls (market.quote): 1 ran');
      expect(run.stdout).toContain('part 2 on the real model: the run ended final');
      expect(run.stdout).toContain('no proposal waits for a human, so there is nothing to approve');
      // Part 3 asks the model too: this one answers without a tool call, and the demo says so.
      expect(run.stdout).toContain('part 3 on the real model: the run ended final after 1 model turns; 0 tool calls (none)');
      expect(run.stdout).toMatch(/step 1 {2}model: Checking the price\.\n {8}-> market\.quote \{"symbol":"ACME"\}\n {11}allowed: /);
      expect(run.code).toBe(0);
      // Every part reached the model, through the SDK with the key from the environment.
      expect(model.requests.length).toBe(5);
      expect(model.requests.every((r) => r.body.stream === true && r.body.model === 'local-model')).toBe(true);
      expect(model.requests.every((r) => r.headers.authorization === `Bearer ${key}`)).toBe(true);
    } finally {
      await model.close();
    }
  });

  it('exits 1 saying the model could not be used when it cannot', async () => {
    const model = await openAIProtocolServer(() => ({ text: 'unused' }));
    const url = model.url;
    await model.close(); // nothing listens there any more
    const run = await demo({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: url, ZMODU_MODEL_PROVIDER: 'openai' });
    expect(run.stdout.split('\n')[0]).toContain(`"gpt-4o-mini" (the default; set ZMODU_MODEL) at ${url}`);
    expect(run.stdout).toMatch(/the model could not be used \(model_error: .*\); check the model variables\./);
    expect(run.code).toBe(1);
  });

  it('stays on the scripted model without the variables, says so, checks the scripted outcome, and shows an execute-class call refused with the ToolDenied observation and the model falling back to a propose skill (regression: the demo had lost that first scenario)', async () => {
    const run = await demo({});
    expect(run.stdout.split('\n')[0]).toBe('zmodu for NestJS: offline demo (scripted model, no model key needed)');
    expect(run.stdout).toContain('part 1 complete');
    expect(run.stdout).toContain('part 2 complete: executed, risk_rejected, needs_human, then approved over HTTP and executed.');
    // Part 3: the junior's policy lists command.execute but may not execute; boot reports the blind spot.
    expect(run.stdout).toMatch(
      /Agent 'junior' policy needs attention: execute-class skills are allowed by name but refused by class .*: command\.execute/,
    );
    expect(run.stdout).toContain('auditPolicy: classDeniedTools=[command.execute] hasClassBlindSpot=true');
    const orderId = /goal: Cancel order ([0-9a-f-]{36})\./.exec(run.stdout)?.[1];
    expect(orderId).toBeDefined();
    // The model tries to execute, gets the ToolDenied observation, and proposes instead.
    expect(run.stdout).toContain(
      [
        `        -> command.execute {"command":"order.cancel","args":{"orderId":"${orderId}","reason":"requested"}}`,
        '           DENIED (denied_execute_class): {"error":"ToolDenied","reason":"denied_execute_class"}',
        'step 2  model: Executing was refused (denied_execute_class); asking the desk to cancel it instead.',
        `        -> notification.send {"channel":"desk-log","subject":"cancel request","message":"please cancel order ${orderId}"}`,
        '           allowed: {"channel":"desk-log","delivered":true}',
      ].join('\n'),
    );
    expect(run.stdout).toContain('metrics: steps 3, tool calls 2, denied {"denied_execute_class":1}');
    expect(run.stdout).toMatch(
      / {2}command\.execute +execute +denied +denied_execute_class +denied +tenant=acme user=demo-trader\n {2}notification\.send +propose +allowed +- +ok /,
    );
    expect(run.stdout).toContain(
      'part 3 complete: command.execute was refused by class ({"error":"ToolDenied","reason":"denied_execute_class"}) and the junior proposed instead (notification.send).',
    );
    expect(run.stdout).not.toContain('did NOT go as expected');
    expect(run.code).toBe(0);
  });

  it('refuses variables that cannot work, saying what to set', async () => {
    const run = await demo({ ZMODU_MODEL_PROVIDER: 'gemini' });
    expect(run.stderr).toContain('error: ZMODU_MODEL_PROVIDER must be one of openai, anthropic, scripted (got "gemini").');
    expect(run.code).toBe(1);
  });
});

describe('modelFromEnv (the demo and the server choose the same way)', () => {
  it('chooses by ZMODU_MODEL_PROVIDER, else by the key that is set (OpenAI first), else the scripted model', () => {
    expect(modelFromEnv({}).kind).toBe('scripted');
    expect(modelFromEnv({}).provider).toBeUndefined();
    expect(modelFromEnv({}).description).toMatch(/scripted \(offline; set OPENAI_API_KEY or ANTHROPIC_API_KEY/);
    const openai = modelFromEnv({ OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'a' });
    expect(openai.provider).toBeInstanceOf(OpenAIModelProvider);
    expect(openai.provider?.name).toBe('openai:gpt-4o-mini');
    expect(openai.description).toBe(
      'model: OpenAI-compatible (Chat Completions) "gpt-4o-mini" (the default; set ZMODU_MODEL) at https://api.openai.com/v1',
    );
    const claude = modelFromEnv({ ANTHROPIC_API_KEY: 'a' });
    expect(claude.provider).toBeInstanceOf(AnthropicModelProvider);
    expect(claude.provider?.name).toBe('anthropic:claude-sonnet-4-5');
    expect(
      modelFromEnv({ ZMODU_MODEL_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'k', ZMODU_MODEL: 'claude-haiku-4-5' })
        .provider?.name,
    ).toBe('anthropic:claude-haiku-4-5');
    expect(modelFromEnv({ ZMODU_MODEL_PROVIDER: 'scripted', OPENAI_API_KEY: 'k' }).kind).toBe('scripted');
    const ollama = modelFromEnv({ OPENAI_API_KEY: 'ollama', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', ZMODU_MODEL: 'llama3.1:8b' });
    expect(ollama.description).toBe('model: OpenAI-compatible (Chat Completions) "llama3.1:8b" at http://127.0.0.1:11434/v1');
  });

  it('refuses what cannot work, saying what to set', () => {
    expect(() => modelFromEnv({ ZMODU_MODEL_PROVIDER: 'gemini' })).toThrow(/must be one of openai, anthropic, scripted \(got "gemini"\)/);
    expect(modelFromEnv({ ZMODU_MODEL_PROVIDER: 'OpenAI ', OPENAI_API_KEY: 'k' }).kind).toBe('openai');
    expect(() => modelFromEnv({ ZMODU_MODEL_PROVIDER: 'openai' })).toThrow(/needs OPENAI_API_KEY \(a local server such as Ollama/);
    expect(() => modelFromEnv({ ZMODU_MODEL_PROVIDER: 'anthropic' })).toThrow(/needs ANTHROPIC_API_KEY\.$/);
    expect(() => modelFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })).toThrow(/OPENAI_BASE_URL is set but no model key is/);
    expect(() => modelFromEnv({ ZMODU_MODEL: 'gpt-4o' })).toThrow(/ZMODU_MODEL is set but no model key is.*ZMODU_MODEL_PROVIDER=scripted/);
    expect(() => modelFromEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'localhost:11434' })).toThrow(
      /OPENAI_BASE_URL must be an http\(s\) URL/,
    );
    expect(() => modelFromEnv({ OPENAI_API_KEY: 'k', ZMODU_MODEL: 'gpt 4' })).toThrow(/ZMODU_MODEL must be a model name/);
  });
});
