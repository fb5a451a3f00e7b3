import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Test, TestingModule } from '@nestjs/testing';
import { AgentAuditLog } from '@zmodu/guard';
import { SkillRegistry } from '@zmodu/skills';
import { closedUrl, ExternalMcpHttpServer, startExternalMcpHttpServer } from '../__fixtures__/external-mcp-http';
import { ReceivedCall } from '../__fixtures__/external-mcp-server';
import { logsOf } from '../__fixtures__/logs-of';
import { AgentSpec } from '../agent-definition';
import { AgentModule } from '../agent.module';
import { AgentRegistry } from '../agent.registry';
import { ModelRequest } from '../providers/model-provider';
import { ScriptedModelProvider, ScriptedTurn } from '../providers/scripted-model.provider';
import { McpServerOptions } from './mcp-server-options';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', '..', '..', 'scripts', 'register-ts.js');

const ROOT = resolve(__dirname, '../../../..');
const STDIO_FIXTURE = resolve(__dirname, '../__fixtures__/external-mcp-server.stdio.ts');
const LISTED = [
  'weather.get_weather',
  'weather.get_forecast',
  'weather.send_alert',
  'weather.flaky_station',
  'weather.list_stations',
  'weather.bad_pattern',
  'weather.slow',
];

/**
 * The application's classes of the fixture's read-only tools: the server's readOnlyHint is not trusted by default
 * (trustReadOnlyHint: false), so a tool is `read` only because the application says so.
 */
const READS = { actions: { 'get-weather': 'read', getForecast: 'read', flaky_station: 'read', slow: 'read' } } as const;

const guarded = (turns: ScriptedTurn[], over: Partial<AgentSpec> = {}): AgentSpec => ({
  name: 'forecaster',
  provider: new ScriptedModelProvider(turns),
  skills: LISTED,
  guard: { allow: LISTED, allowExecute: false },
  ...over,
});

async function boot(mcpServers: McpServerOptions[], agents: AgentSpec[]): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [AgentModule.forRoot({ agents, mcpServers, guard: { auditStore: 'memory', quotaStore: 'memory' } })],
  }).compile();
  await app.init();
  return app;
}

/** The stdio server entry: the fixture run from its source, its call log in a file of its own. */
function stdioServer(dir: string, over: Partial<McpServerOptions> = {}): McpServerOptions {
  return {
    name: 'weather',
    command: process.execPath,
    args: ['-r', REGISTER_TS, STDIO_FIXTURE],
    env: { EXTERNAL_MCP_CALL_LOG: join(dir, 'calls.jsonl') },
    cwd: ROOT,
    ...READS,
    ...over,
  } as McpServerOptions;
}

function stdioLog(dir: string): { pid?: number; tool?: string; arguments?: unknown }[] {
  return readFileSync(join(dir, 'calls.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { pid?: number; tool?: string; arguments?: unknown });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
}

const toolMessages = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as unknown);

// The model's turns: two read-only tools, then four calls that must not reach the server's tools as sent.
const script: ScriptedTurn[] = [
  {
    toolCalls: [
      { name: 'weather.get_weather', arguments: { city: 'Oslo' } },
      { name: 'weather.get_forecast', arguments: { city: 'Oslo' } },
    ],
  },
  {
    toolCalls: [
      { name: 'weather.send_alert', arguments: { message: 'storm' } },
      { name: 'weather.secret_tool', arguments: {} },
      { name: 'weather.flaky_station', arguments: { station: 'X1' } },
      { name: 'weather.get_weather', arguments: { city: 42 } },
    ],
  },
  (req) => {
    const [now, forecast] = toolMessages(req) as [{ tempC: number }, string];
    return { text: `Oslo: ${now.tempC} °C. ${forecast}` };
  },
];

describe.each([
  ['stdio', 'stdio'],
  ['Streamable HTTP', 'http'],
] as const)('external MCP server over %s: its tools called through the guard', (_label, kind) => {
  let dir: string;
  let http: ExternalMcpHttpServer | undefined;
  let app: TestingModule;
  let warnings: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zmodu-mcp-'));
    if (kind === 'http') http = await startExternalMcpHttpServer();
    const server = kind === 'stdio' ? stdioServer(dir) : { name: 'weather', url: http!.url, ...READS };
    warnings = await logsOf(async () => void (app = await boot([server], [guarded(script)])));
  });

  afterAll(async () => {
    await app?.close();
    await http?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const received = (): ReceivedCall[] =>
    kind === 'http' ? http!.received : (stdioLog(dir).filter((l) => l.tool !== undefined) as ReceivedCall[]);

  it('registers only the listed tools, named <server>.<tool>, those the application maps to read as read and the others as execute', () => {
    const skills = app.get(SkillRegistry);
    const mcp = skills.list().filter((s) => s.name.startsWith('weather.'));
    expect(mcp.map((s) => [s.name, s.action, s.tenantScoped])).toEqual([
      ['weather.flaky_station', 'read', true],
      ['weather.get_forecast', 'read', true],
      ['weather.get_weather', 'read', true],
      ['weather.send_alert', 'execute', true],
      ['weather.slow', 'read', true],
    ]);
    expect(skills.get('weather.get_weather')?.parameters).toMatchObject({ type: 'object', required: ['city'] });
    expect(skills.get('weather.get_weather')?.source).toMatch(/MCP server 'weather'.*tool 'get-weather'/);
    // Not listed by any agent: not registered, so never offered.
    expect(skills.has('weather.secret_tool')).toBe(false);
    const offered = app
      .get(AgentRegistry)
      .get('forecaster')
      .tools()
      .map((t) => t.name);
    expect(offered).not.toContain('weather.secret_tool');
    expect(offered).toContain('weather.get_forecast');
  });

  it('refuses both tools of a name collision and a tool whose schema does not compile, with warnings naming them', () => {
    const skills = app.get(SkillRegistry);
    expect(skills.has('weather.list_stations')).toBe(false);
    expect(skills.has('weather.bad_pattern')).toBe(false);
    expect(warnings).toContainEqual(
      expect.stringMatching(/tools 'list-stations' and 'list_stations' both map to the skill name 'weather\.list_stations'/),
    );
    expect(warnings).toContainEqual(
      expect.stringMatching(/tool 'bad_pattern' is not registered as 'weather\.bad_pattern': its inputSchema cannot be compiled/),
    );
    // The policy audit at boot already sees the MCP skills: send_alert is execute while allowExecute is false.
    expect(app.get(AgentRegistry).get('forecaster').auditPolicy()).toMatchObject({
      classDeniedTools: ['weather.send_alert'],
      unknownTools: ['weather.bad_pattern', 'weather.list_stations'],
    });
    expect(warnings).toContainEqual(expect.stringMatching(/Agent 'forecaster' policy needs attention.*weather\.send_alert/));
  });

  it('runs an agent: read tools answer, the execute tool is denied by class, the rest are refused before the server', async () => {
    const result = await app.get(AgentRegistry).get('forecaster').run('Weather in Oslo?', { tenantId: 't1', userId: 'alice' });

    expect(result.stoppedReason).toBe('final');
    expect(result.answer).toBe('Oslo: 21 °C. Sunny in Oslo all week.');
    const calls = result.steps.flatMap((s) => s.toolCalls);
    expect(calls.map((c) => [c.name, c.decision, c.cause, c.outcome])).toEqual([
      ['weather.get_weather', 'allowed', null, 'ok'],
      ['weather.get_forecast', 'allowed', null, 'ok'],
      ['weather.send_alert', 'denied', 'denied_execute_class', 'denied'],
      ['weather.secret_tool', 'denied', 'denied_not_listed', 'denied'],
      ['weather.flaky_station', 'allowed', null, 'error'],
      ['weather.get_weather', 'allowed', 'invalid_arguments', 'invalid_arguments'],
    ]);
    const seen = calls.map((c) => JSON.parse(c.observation) as Record<string, unknown>);
    expect(seen[0]).toEqual({ city: 'Oslo', tempC: 21 });
    expect(seen[1]).toBe('Sunny in Oslo all week.');
    expect(seen[2]).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    expect(seen[3]).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    expect(seen[4]).toEqual({ error: 'ToolError', reason: 'mcp_tool_error', message: 'station offline: try another station' });
    expect(seen[5]).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/city', message: 'must be string' }] });

    // The server side: only the three calls that passed the guard and the schema reached its tools.
    expect(received()).toEqual([
      { tool: 'get-weather', arguments: { city: 'Oslo' } },
      { tool: 'getForecast', arguments: { city: 'Oslo' } },
      { tool: 'flaky_station', arguments: { station: 'X1' } },
    ]);

    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    expect(audit.map((a) => [a.skill, a.action, a.decision, a.cause, a.outcome])).toEqual([
      ['weather.get_weather', 'read', 'allowed', null, 'ok'],
      ['weather.get_forecast', 'read', 'allowed', null, 'ok'],
      ['weather.send_alert', 'execute', 'denied', 'denied_execute_class', 'denied'],
      ['weather.secret_tool', 'execute', 'denied', 'denied_not_listed', 'denied'],
      ['weather.flaky_station', 'read', 'allowed', null, 'error'],
      ['weather.get_weather', 'read', 'allowed', 'invalid_arguments', 'invalid_arguments'],
    ]);
    expect(audit.every((a) => a.agent === 'forecaster' && a.tenantId === 't1' && a.userId === 'alice')).toBe(true);
  });
});

describe('external MCP server over stdio: lifecycle', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'zmodu-mcp-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const reader = (turns: ScriptedTurn[] = [{ text: 'ok' }]) =>
    guarded(turns, { skills: ['weather.get_weather'], guard: { allow: ['weather.get_weather'] } });

  it('kills the child process when the module is destroyed', async () => {
    const app = await boot([stdioServer(dir)], [reader()]);
    const pid = stdioLog(dir)[0].pid as number;
    expect(alive(pid)).toBe(true);
    await app.close();
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it('answers the calls of a server that died at once with mcp_unavailable and when to retry, and warns', async () => {
    const turns: ScriptedTurn[] = [
      { toolCalls: [{ name: 'weather.get_weather', arguments: { city: 'Oslo' } }] },
      (req) => ({ text: JSON.stringify(toolMessages(req).at(-1)) }),
    ];
    // The next attempt to reopen is a minute away: the call must not wait for it.
    const app = await boot([stdioServer(dir, { reconnectDelayMs: 60_000 })], [reader(turns)]);
    const pid = stdioLog(dir)[0].pid as number;
    let hint = 0;
    const logs = await logsOf(async (lines) => {
      process.kill(pid, 'SIGKILL');
      await until(() => !alive(pid));
      // The client has seen the connection close (not a fixed wait: a loaded machine may take longer to read it).
      await until(() => lines.some((l) => /MCP server 'weather' closed the connection/.test(l)));
      const r = await app.get(AgentRegistry).get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u' });
      expect(r.stoppedReason).toBe('final');
      const seen = JSON.parse(r.answer) as { reason: string; retryAfterMs: number; message: string };
      expect(seen).toMatchObject({ error: 'ToolError', reason: 'mcp_unavailable' });
      const told = /its connection was lost and is being reopened\); try again in (\d+) s/.exec(seen.message);
      expect(told).not.toBeNull();
      expect(seen.retryAfterMs).toBe(Number(told![1]) * 1000);
      hint = seen.retryAfterMs;
    });
    const lost = logs.find((l) =>
      /MCP server 'weather' closed the connection: its tools fail at once \(mcp_unavailable\) until it is reopened/.test(l),
    );
    expect(lost).toBeDefined();
    // The hint counts down to the reopen the log announced (a minute, jittered down to half): one of the whole seconds
    // up to it (it only shrinks as time passes, so no load can break this), never past the reopen nor a fraction.
    const delay = Number(/next attempt in (\d+) ms/.exec(lost!)?.[1]);
    expect(delay).toBeGreaterThanOrEqual(30_000);
    expect(delay).toBeLessThanOrEqual(60_000);
    expect(Array.from({ length: Math.ceil(delay / 1000) }, (_, i) => (i + 1) * 1000)).toContain(hint);
    await app.close();
  });

  it('fails boot with the stderr of a server that exits at start, and kills the servers it had started', async () => {
    const good = stdioServer(dir, { name: 'good' });
    const broken = stdioServer(dir, { env: {} });
    const agent = guarded([{ text: 'ok' }], { skills: [], guard: { allow: ['weather.get_weather', 'good.get_weather'] } });
    await expect(boot([good, broken], [agent])).rejects.toThrow(
      /MCP server 'weather' \(stdio: .*node\) could not be started and initialized: .*Connection closed; its stderr ends: "EXTERNAL_MCP_CALL_LOG is not set".*set required: false/,
    );
    const pid = stdioLog(dir)[0].pid as number;
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it('fails boot when a server does not answer initialize within connectTimeoutMs, and ends it', async () => {
    const mute = `require('node:fs').writeFileSync(${JSON.stringify(join(dir, 'calls.jsonl'))}, JSON.stringify({ pid: process.pid })); setInterval(() => {}, 1000);`;
    const server = { name: 'weather', command: process.execPath, args: ['-e', mute], connectTimeoutMs: 500 };
    await expect(boot([server], [reader()])).rejects.toThrow(
      /MCP server 'weather' \(stdio: .*node\) could not be started and initialized: no answer within 500 ms \(connectTimeoutMs\)/,
    );
    const pid = stdioLog(dir)[0].pid as number;
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it('fails boot naming a command that does not exist', async () => {
    await expect(boot([{ name: 'weather', command: '/nonexistent/mcp-weather' }], [reader()])).rejects.toThrow(
      /MCP server 'weather' \(stdio: \/nonexistent\/mcp-weather\) could not be started and initialized: spawn \/nonexistent\/mcp-weather ENOENT/,
    );
  });
});

describe('external MCP server over Streamable HTTP: headers, failures, timeouts', () => {
  let http: ExternalMcpHttpServer;
  beforeEach(async () => (http = await startExternalMcpHttpServer()));
  afterEach(() => http.close());
  const reader = (turns: ScriptedTurn[], name = 'weather') =>
    guarded(turns, { skills: [`${name}.get_weather`, `${name}.slow`], guard: { allow: [`${name}.get_weather`, `${name}.slow`] } });
  const quote = { toolCalls: [{ name: 'weather.get_weather', arguments: { city: 'Oslo' } }] };
  const relay: ScriptedTurn = (req) => ({ text: JSON.stringify(toolMessages(req).at(-1)) });

  it('sends the headers with every request and never logs them', async () => {
    const headers = { Authorization: 'Bearer s3cret-token', 'X-Api-Key': 'k-987654' };
    const unreachable = await closedUrl();
    let app: TestingModule | undefined;
    const logs = await logsOf(async () => {
      app = await boot(
        [
          { name: 'weather', url: http.url, headers, ...READS },
          { name: 'backup', url: `${unreachable}?token=q-secret`, headers, required: false },
        ],
        [reader([quote, relay]), reader([{ text: 'ok' }], 'backup')].map((a, i) => ({ ...a, name: `agent${i}` })),
      );
      const r = await app.get(AgentRegistry).get('agent0').run('Oslo?', { tenantId: 't1', userId: 'u' });
      expect(JSON.parse(r.answer)).toEqual({ city: 'Oslo', tempC: 21 });
      await app.close();
    });
    expect(http.requests.length).toBeGreaterThanOrEqual(3); // initialize, initialized, tools/list, tools/call
    for (const h of http.requests) expect([h.authorization, h['x-api-key']]).toEqual(['Bearer s3cret-token', 'k-987654']);
    expect(logs).toContainEqual(expect.stringMatching(/MCP server 'backup' \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached/));
    const all = logs.join('\n');
    for (const secret of ['s3cret-token', 'k-987654', 'q-secret']) expect(all).not.toContain(secret);
  });

  it('fails boot when a required server is unreachable, naming it and what failed', async () => {
    const url = await closedUrl();
    await expect(boot([{ name: 'weather', url }], [reader([{ text: 'ok' }])])).rejects.toThrow(
      /MCP server 'weather' \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached and initialized: fetch failed: ECONNREFUSED\. .*set required: false on it to boot without its tools/,
    );
  });

  it('boots without the tools of an unreachable server that is not required; the agent runs and its call is refused', async () => {
    const url = await closedUrl();
    let app: TestingModule | undefined;
    const logs = await logsOf(async () => void (app = await boot([{ name: 'weather', url, required: false }], [reader([quote, relay])])));
    expect(logs).toContainEqual(
      expect.stringMatching(/MCP server 'weather' .*could not be reached.*It is not required \(required: false\)/),
    );
    expect(app!.get(SkillRegistry).has('weather.get_weather')).toBe(false);
    const r = await app!.get(AgentRegistry).get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u' });
    expect(r.stoppedReason).toBe('final');
    expect(JSON.parse(r.answer)).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    await app!.close();
  });

  it('turns a server that went away into a tool error the model sees, not a crash of the run', async () => {
    const app = await boot([{ name: 'weather', url: http.url, ...READS }], [reader([quote, relay])]);
    await http.close();
    const r = await app.get(AgentRegistry).get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u' });
    expect(r.stoppedReason).toBe('final');
    expect(r.steps[0].toolCalls[0]).toMatchObject({ decision: 'allowed', outcome: 'error', ok: false });
    expect(JSON.parse(r.answer)).toEqual({
      error: 'ToolError',
      reason: 'mcp_unavailable',
      message: expect.stringMatching(
        /^the MCP server 'weather' could not be reached for 'get-weather' \(fetch failed: (ECONNREFUSED|UND_ERR_SOCKET)\); try again in 1 s/,
      ),
      retryAfterMs: 1000,
    });
    await app.close();
  });

  it('stops a call at timeoutMs and the run goes on', async () => {
    const slow = { toolCalls: [{ name: 'weather.slow', arguments: { ms: 10_000 } }] };
    const app = await boot([{ name: 'weather', url: http.url, timeoutMs: 300, ...READS }], [reader([slow, relay])]);
    // The tool would answer after 10 s: the outcome is the deadline's (300 ms), and the run goes on to its final turn.
    const r = await app.get(AgentRegistry).get('forecaster').run('wait', { tenantId: 't1', userId: 'u' });
    expect(r.steps[0].toolCalls[0].outcome).toBe('timeout');
    expect(JSON.parse(r.answer)).toEqual({ error: 'Timeout', reason: 'deadline_exceeded', timeoutMs: 300 });
    expect(r.stoppedReason).toBe('final');
    await app.close();
  });

  it('does not connect a server when only a skills filter would take its tools', async () => {
    const agent = guarded([{ text: 'ok' }], { skills: (s) => s.name.startsWith('weather.'), guard: { allow: ['other.tool'] } });
    let app: TestingModule | undefined;
    const logs = await logsOf(async () => void (app = await boot([{ name: 'weather', url: http.url, ...READS }], [agent])));
    expect(logs).toContainEqual(
      expect.stringMatching(/MCP server 'weather': no agent lists a 'weather\.<tool>' name .* so it is not connected/),
    );
    expect(http.requests).toEqual([]);
    expect(app!.get(AgentRegistry).get('forecaster').tools()).toEqual([]);
    await app!.close();
  });

  it('applies requiredPermission and tenantScoped to every tool of the server, before the server is called', async () => {
    const app = await boot(
      [{ name: 'weather', url: http.url, requiredPermission: 'weather:read', ...READS }],
      [reader([quote, relay]), { ...reader([quote, relay]), name: 'anon' }],
    );
    const agents = app.get(AgentRegistry);
    const forbidden = await agents.get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u' });
    expect(JSON.parse(forbidden.answer)).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'weather:read' });
    const noTenant = await agents.get('anon').run('Oslo?', { userId: 'u', permissions: ['weather:read'] });
    expect(JSON.parse(noTenant.answer)).toEqual({ error: 'TenantRequired', reason: 'tenant_scope_unavailable' });
    expect(http.received).toEqual([]);
    const allowed = await agents.get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u', permissions: ['weather:read'] });
    expect(JSON.parse(allowed.answer)).toEqual({ city: 'Oslo', tempC: 21 });
    expect(http.received).toEqual([{ tool: 'get-weather', arguments: { city: 'Oslo' } }]);
    await app.close();
  });

  it('takes its options from forRootAsync', async () => {
    const app = await Test.createTestingModule({
      imports: [
        AgentModule.forRootAsync({
          useFactory: async () => ({ agents: [reader([quote, relay])], mcpServers: [{ name: 'weather', url: http.url, ...READS }] }),
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
    }).compile();
    await app.init();
    const r = await app.get(AgentRegistry).get('forecaster').run('Oslo?', { tenantId: 't1', userId: 'u' });
    expect(JSON.parse(r.answer)).toEqual({ city: 'Oslo', tempC: 21 });
    await app.close();
  });
});
