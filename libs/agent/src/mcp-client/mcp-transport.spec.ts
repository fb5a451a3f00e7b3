import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Test, TestingModule } from '@nestjs/testing';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillCallResult, SkillDispatcher } from '@zmodu/skills';
import { HostileTool, startHostile } from '../__fixtures__/hostile-mcp-http';
import { logsOf } from '../__fixtures__/logs-of';
import { AgentModule } from '../agent.module';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { MAX_ANSWERS_IN_FLIGHT } from './mcp-answers';
import { McpServerOptions } from './mcp-server-options';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', '..', '..', 'scripts', 'register-ts.js');

// The transports against hostile servers: a message too large fails its call alone (whatever the transport), and a
// lost connection is reopened with backoff while calls fail at once.

const ROOT = resolve(__dirname, '../../../..');
const HOSTILE_STDIO = resolve(__dirname, '../__fixtures__/hostile-mcp-server.stdio.ts');
const MiB = 1024 * 1024;

async function boot(server: McpServerOptions, allow: string[]): Promise<TestingModule> {
  const agent = { name: 'a', provider: new ScriptedModelProvider([{ text: 'x' }]), skills: allow, guard: { allow, allowExecute: true } };
  const app = await Test.createTestingModule({
    imports: [AgentModule.forRoot({ agents: [agent], mcpServers: [server], guard: { auditStore: 'memory', quotaStore: 'memory' } })],
  }).compile();
  await app.init();
  return app;
}

/** One call through the dispatcher, as an agent with allowExecute makes it; the observation parsed. */
async function call(app: TestingModule, skill: string, args: unknown): Promise<SkillCallResult & { seen: Record<string, unknown> }> {
  const ctx = createSkillContext({
    guard: new Guard({ allow: [skill], allowExecute: true }),
    tenantId: 't1',
    userId: 'u1',
    permissions: [],
    runId: 'r1',
    agent: 'a',
  });
  const r = await app.get(SkillDispatcher).dispatch(ctx, skill, args);
  return { ...r, seen: JSON.parse(r.observation) as Record<string, unknown> };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  let value = await probe();
  while (!done(value) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    value = await probe();
  }
  return value;
}

describe('external MCP server over stdio: a result too large, a server that dies', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'zmodu-mcp-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const pids = () =>
    readFileSync(join(dir, 'pids.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { pid: number }).pid);
  const entry = (over: Partial<McpServerOptions> = {}): McpServerOptions =>
    ({
      name: 'evil',
      command: process.execPath,
      args: ['-r', REGISTER_TS, HOSTILE_STDIO],
      env: { HOSTILE_MCP_LOG: join(dir, 'pids.jsonl'), HOSTILE_MCP_REFUSE: join(dir, 'refuse') },
      cwd: ROOT,
      ...over,
    }) as McpServerOptions;

  it('answers one 11 MiB result with mcp_result_too_large and the next call works (attack: one answer past the SDK 10 MiB buffer closed the connection for good)', async () => {
    const app = await boot(entry(), ['evil.dump', 'evil.echo']);
    try {
      const big = await call(app, 'evil.dump', { bytes: 11 * MiB });
      expect(big.outcome).toBe('error');
      expect(big.seen).toEqual({
        error: 'ToolError',
        reason: 'mcp_result_too_large',
        maxMessageBytes: 8 * MiB,
        message: expect.stringMatching(/^the MCP server 'evil' answered 'dump' with more than 8388608 bytes \(maxMessageBytes\)/),
      });
      expect(big.observation.length).toBeLessThan(1000);
      // The same connection, the same child: nothing was closed.
      const next = await call(app, 'evil.echo', { text: 'still here' });
      expect([next.outcome, next.seen]).toEqual(['ok', 'still here']);
      expect(pids()).toHaveLength(1);
      // A result between maxResultBytes and maxMessageBytes is refused by value, the connection up too.
      expect((await call(app, 'evil.dump', { bytes: 300_000 })).seen).toMatchObject({
        reason: 'mcp_result_too_large',
        maxResultBytes: 262_144,
      });
      expect((await call(app, 'evil.echo', { text: 'again' })).seen).toBe('again');
    } finally {
      await app.close();
    }
  });

  it('reopens a server process that died and came back, with backoff; calls meanwhile fail at once with when to retry (attack: a crash left every tenant with mcp_unavailable until a restart)', async () => {
    const app = await boot(entry({ reconnectDelayMs: 100, reconnectMaxDelayMs: 400 }), ['evil.echo']);
    try {
      const [first] = pids();
      // Down, and it refuses to start for now: the attempts to reopen fail and back off.
      writeFileSync(join(dir, 'refuse'), '');
      const logs = await logsOf(async (lines) => {
        process.kill(first, 'SIGKILL');
        const down = await until(
          () => call(app, 'evil.echo', { text: 'x' }),
          (r) => r.seen.reason === 'mcp_unavailable',
        );
        // The next attempt is at most reconnectMaxDelayMs (400 ms) away: the hint is the whole-second floor, 1 s.
        expect(down.seen).toMatchObject({ error: 'ToolError', reason: 'mcp_unavailable', retryAfterMs: 1000 });
        await until(
          async () => lines.filter((l) => l.includes('reopening the connection failed')).length,
          (failed) => failed >= 2,
        );
        // It comes back: the next attempt reopens it and calls answer again.
        rmSync(join(dir, 'refuse'));
        const back = await until(
          () => call(app, 'evil.echo', { text: 'back' }),
          (r) => r.outcome === 'ok',
        );
        expect(back.seen).toBe('back');
      });
      expect(pids()).toHaveLength(2);
      expect(pids()[1]).not.toBe(first);
      expect(logs).toContainEqual(
        expect.stringMatching(
          /MCP server 'evil' closed the connection: its tools fail at once \(mcp_unavailable\) until it is reopened; next attempt in \d+ ms/,
        ),
      );
      expect(logs).toContainEqual(
        expect.stringMatching(/MCP server 'evil': reopening the connection failed \(attempt 1\): .*; next attempt in \d+ ms/),
      );
      expect(logs).toContainEqual(expect.stringMatching(/MCP server 'evil': connection reopened \(after \d+ attempts\)/));
      // Jittered and bounded: no wait past reconnectMaxDelayMs.
      const waits = logs.flatMap((l) => [...l.matchAll(/next attempt in (\d+) ms/g)].map((m) => Number(m[1])));
      expect(waits.length).toBeGreaterThanOrEqual(2);
      for (const w of waits) expect(w).toBeLessThanOrEqual(400);
    } finally {
      await app.close();
    }
  });

  it('holds a bounded number of answers for a server that floods requests and reads none (attack: 300 pings with 64 KiB ids piled up every answer in our memory)', async () => {
    const logs = await logsOf(async () => {
      const app = await boot(entry({ env: { ...entry().env, HOSTILE_MCP_FLOOD: '300:65536' } }), ['evil.answers', 'evil.echo']);
      try {
        // It reads again once its pings are out: the answers it gets are those we still held for it.
        let last = -1;
        const read = await until(
          async () => {
            const before = last;
            last = (await call(app, 'evil.answers', {})).seen as unknown as number;
            return { before, now: last };
          },
          ({ before, now }) => before === now && now >= 0,
        );
        expect(read.now).toBeLessThanOrEqual(MAX_ANSWERS_IN_FLIGHT + 4);
        // Its tools work as before: the connection was not closed for it.
        expect((await call(app, 'evil.echo', { text: 'still here' })).seen).toBe('still here');
        expect(pids()).toHaveLength(1);
      } finally {
        await app.close();
      }
    });
    expect(logs).toContainEqual(
      expect.stringMatching(/^MCP server 'evil' sends requests faster than it reads our answers \(more than 16 or 8388608 bytes/),
    );
  });
});

describe('external MCP server over Streamable HTTP: a result too large', () => {
  /** A tool answered by a body that starts as `prefix` and never ends: the SDK would wait for all of it. */
  const endless = (type: string, prefix: string): HostileTool => ({
    name: 'endless',
    raw: (res) => {
      res.writeHead(200, { 'content-type': type });
      res.write(prefix);
      const chunk = 'A'.repeat(64 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    },
  });
  const TEXT_RESULT = '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"';
  const echo: HostileTool = { name: 'echo', result: () => ({ content: [{ type: 'text', text: 'fine' }] }) };

  it.each([
    ['a JSON body', 'application/json', TEXT_RESULT, false],
    ['an SSE event', 'text/event-stream', `event: message\ndata: ${TEXT_RESULT}`, true],
  ])(
    'refuses %s past maxMessageBytes as it streams, not at its end, and the next call works (attack: an answer that never ends)',
    async (_what, type, prefix, sse) => {
      const server = await startHostile([endless(type, prefix), echo], { sse });
      const app = await boot({ name: 'evil', url: server.url, maxMessageBytes: MiB, timeoutMs: 20_000 }, ['evil.endless', 'evil.echo']);
      try {
        const r = await call(app, 'evil.endless', {});
        expect(r.seen).toMatchObject({ error: 'ToolError', reason: 'mcp_result_too_large', maxMessageBytes: MiB });
        expect((await call(app, 'evil.echo', {})).seen).toBe('fine');
      } finally {
        await app.close();
        await server.close();
      }
    },
  );

  it('refuses one large SSE event and passes the small ones around it byte for byte', async () => {
    const server = await startHostile(
      [
        { name: 'big', result: () => ({ content: [{ type: 'text', text: 'B'.repeat(2 * MiB) }] }) },
        { name: 'small', result: () => ({ content: [{ type: 'text', text: 'é'.repeat(1000) }] }) },
      ],
      { sse: true },
    );
    const app = await boot({ name: 'evil', url: server.url, maxMessageBytes: MiB }, ['evil.big', 'evil.small']);
    try {
      expect((await call(app, 'evil.big', {})).seen).toMatchObject({ reason: 'mcp_result_too_large', maxMessageBytes: MiB });
      expect((await call(app, 'evil.small', {})).seen).toBe('é'.repeat(1000));
    } finally {
      await app.close();
      await server.close();
    }
  });

  it('reopens the session of a server that restarted and forgot it (404), instead of failing every later call', async () => {
    const server = await startHostile([echo], { stateful: true });
    const app = await boot({ name: 'evil', url: server.url, reconnectDelayMs: 50 }, ['evil.echo']);
    try {
      expect((await call(app, 'evil.echo', {})).seen).toBe('fine');
      server.forget();
      const lost = await call(app, 'evil.echo', {});
      expect(lost.seen).toMatchObject({ reason: 'mcp_unavailable' });
      const back = await until(
        () => call(app, 'evil.echo', {}),
        (r) => r.outcome === 'ok',
      );
      expect(back.seen).toBe('fine');
      expect(server.initializes()).toBe(2);
    } finally {
      await app.close();
      await server.close();
    }
  });
});
