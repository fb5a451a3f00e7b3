import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Test, TestingModule } from '@nestjs/testing';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { startExternalMcpHttpServer } from '../__fixtures__/external-mcp-http';
import { startExternalMcpV2HttpServer } from '../__fixtures__/external-mcp-v2';
import { startHostile } from '../__fixtures__/hostile-mcp-http';
import { logsOf } from '../__fixtures__/logs-of';
import { AgentModule } from '../agent.module';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { McpEra, McpServerOptions } from './mcp-server-options';

// The eras matrix of the client: our client (AgentModule's mcpServers) against servers of either protocol era, each
// built with the official SDK of its time: v1 (@modelcontextprotocol/sdk, 2025 era: initialize, sessions) and v2
// (@modelcontextprotocol/server: 2026-07-28, stateless, and the 2025 era beside it unless it refuses it).

const REGISTER_TS = join(__dirname, '..', '..', '..', '..', 'scripts', 'register-ts.js');
const ROOT = resolve(__dirname, '../../../..');
const STDIO_V1 = resolve(__dirname, '../__fixtures__/external-mcp-server.stdio.ts');
const STDIO_V2 = resolve(__dirname, '../__fixtures__/external-mcp-server-v2.stdio.ts');
const ALLOW = ['weather.get_weather'];

async function boot(server: McpServerOptions): Promise<TestingModule> {
  const agent = { name: 'a', provider: new ScriptedModelProvider([{ text: 'x' }]), skills: ALLOW, guard: { allow: ALLOW } };
  const app = await Test.createTestingModule({
    imports: [AgentModule.forRoot({ agents: [agent], mcpServers: [server], guard: { auditStore: 'memory', quotaStore: 'memory' } })],
  }).compile();
  await app.init();
  return app;
}

/** One call of weather.get_weather through the dispatcher (guard, schema, tenant), as an agent's tool call goes. */
async function weather(app: TestingModule, city: string) {
  const ctx = createSkillContext({
    guard: new Guard({ allow: ALLOW }),
    tenantId: 't1',
    userId: 'u1',
    permissions: [],
    runId: 'r1',
    agent: 'a',
  });
  return app.get(SkillDispatcher).dispatch(ctx, 'weather.get_weather', { city });
}

const READ = { actions: { 'get-weather': 'read' } } as const;

interface Target {
  readonly label: string;
  /** The era a client in 'auto' lands on. */
  readonly era: 'modern' | 'legacy';
  start(): Promise<{ entry: (era?: McpEra) => McpServerOptions; calls: () => { tool?: string; era?: string }[]; close(): Promise<void> }>;
}

const stdio = (file: string): Target['start'] => {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zmodu-mcp-eras-'));
    const log = join(dir, 'calls.jsonl');
    return {
      entry: (era) =>
        ({
          name: 'weather',
          command: process.execPath,
          args: ['-r', REGISTER_TS, file],
          env: { EXTERNAL_MCP_CALL_LOG: log },
          cwd: ROOT,
          ...READ,
          ...(era ? { era } : {}),
        }) as McpServerOptions,
      calls: () => {
        try {
          return readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { tool?: string; era?: string })
            .filter((l) => l.tool);
        } catch {
          return [];
        }
      },
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  };
};

const TARGETS: Target[] = [
  {
    label: 'a v1 server over Streamable HTTP (stateless)',
    era: 'legacy',
    start: async () => {
      const server = await startExternalMcpHttpServer();
      return {
        entry: (era) => ({ name: 'weather', url: server.url, ...READ, ...(era ? { era } : {}) }),
        calls: () => server.received,
        close: server.close,
      };
    },
  },
  {
    label: 'a v1 server over Streamable HTTP with sessions',
    era: 'legacy',
    start: async () => {
      const server = await startHostile(
        [{ name: 'get-weather', result: () => ({ content: [{ type: 'text', text: JSON.stringify({ city: 'Oslo', tempC: 21 }) }] }) }],
        { stateful: true },
      );
      return {
        entry: (era) => ({ name: 'weather', url: server.url, ...READ, ...(era ? { era } : {}) }),
        calls: () => server.calls.map((c) => ({ tool: c.name })),
        close: server.close,
      };
    },
  },
  {
    label: 'a v2 server over Streamable HTTP (both eras)',
    era: 'modern',
    start: async () => {
      const server = await startExternalMcpV2HttpServer('stateless');
      return {
        entry: (era) => ({ name: 'weather', url: server.url, ...READ, ...(era ? { era } : {}) }),
        calls: () => server.received,
        close: server.close,
      };
    },
  },
  {
    label: 'a v2 server over Streamable HTTP that refuses the 2025 era',
    era: 'modern',
    start: async () => {
      const server = await startExternalMcpV2HttpServer('reject');
      return {
        entry: (era) => ({ name: 'weather', url: server.url, ...READ, ...(era ? { era } : {}) }),
        calls: () => server.received,
        close: server.close,
      };
    },
  },
  { label: 'a v1 server over stdio', era: 'legacy', start: stdio(STDIO_V1) },
  { label: 'a v2 server over stdio', era: 'modern', start: stdio(STDIO_V2) },
];

describe.each(TARGETS)('our MCP client against $label', ({ era, start }) => {
  it(`lands on the ${era === 'modern' ? '2026-07-28' : '2025'} era in auto mode and calls through the guard`, async () => {
    const server = await start();
    try {
      let app: TestingModule | undefined;
      const logs = await logsOf(async () => {
        app = await boot(server.entry());
      });
      try {
        expect(
          app!
            .get(SkillRegistry)
            .list()
            .map((s) => s.name),
        ).toEqual(['weather.get_weather']);
        expect(logs).toContainEqual(
          expect.stringMatching(
            era === 'modern'
              ? /MCP server 'weather' \(.*, MCP 2026-07-28, stateless\)/
              : /MCP server 'weather' \(.*, MCP 2025 era, initialize\)/,
          ),
        );
        const result = await weather(app!, 'Oslo');
        expect(result.ok).toBe(true);
        expect(result.value).toMatchObject({ city: 'Oslo', tempC: expect.any(Number) });
        const calls = server.calls();
        expect(calls.map((c) => c.tool)).toEqual(['get-weather']);
        if (era === 'modern') expect(calls[0].era).toBe('modern');
      } finally {
        await app?.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe('our MCP client, era pinned by the entry', () => {
  it("era: 'legacy' speaks the 2025 handshake to a v2 server that serves both (no probe)", async () => {
    const server = await startExternalMcpV2HttpServer('stateless');
    try {
      const app = await boot({ name: 'weather', url: server.url, era: 'legacy', ...READ });
      try {
        expect((await weather(app, 'Bergen')).value).toMatchObject({ city: 'Bergen' });
        expect(server.received.map((c) => c.era)).toEqual(['legacy']);
        expect(server.eras).not.toContain('modern');
      } finally {
        await app.close();
      }
    } finally {
      await server.close();
    }
  });

  it("era: 'modern' against a 2025-only server fails boot saying so, and 'legacy' against a 2026-only one too", async () => {
    const v1 = await startExternalMcpHttpServer();
    const v2 = await startExternalMcpV2HttpServer('reject');
    try {
      await expect(boot({ name: 'weather', url: v1.url, era: 'modern', ...READ })).rejects.toThrow(
        /MCP server 'weather' \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached and initialized: .*2026-07-28.*set required: false/,
      );
      await expect(boot({ name: 'weather', url: v2.url, era: 'legacy', ...READ })).rejects.toThrow(
        /MCP server 'weather' \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached and initialized: .*(Unsupported protocol version|2026-07-28)/,
      );
      expect(v1.received).toEqual([]);
      expect(v2.received).toEqual([]);
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });

  it('reads a schema that declares JSON Schema 2020-12 (as every v2 tool does), and still refuses what our validator would not enforce', async () => {
    const tools = [
      {
        name: 'declared',
        inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { city: { type: 'string' } } },
      },
      {
        name: 'tuple',
        inputSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { p: { type: 'array', prefixItems: [{ type: 'string' }] } },
        },
      },
      { name: 'foreign', inputSchema: { $schema: 'https://schemas.example/my-dialect', type: 'object' } },
    ].map((t) => ({ ...t, annotations: { readOnlyHint: true } }));
    const server = await startHostile(tools);
    try {
      const allow = ['evil.declared', 'evil.tuple', 'evil.foreign'];
      let app: TestingModule | undefined;
      const agent = { name: 'a', provider: new ScriptedModelProvider([{ text: 'x' }]), skills: allow, guard: { allow } };
      const logs = await logsOf(async () => {
        app = await Test.createTestingModule({
          imports: [
            AgentModule.forRoot({
              agents: [agent],
              mcpServers: [{ name: 'evil', url: server.url, trustReadOnlyHint: true }],
              guard: { auditStore: 'memory', quotaStore: 'memory' },
            }),
          ],
        }).compile();
        await app.init();
      });
      try {
        expect(
          app!
            .get(SkillRegistry)
            .list()
            .map((s) => s.name),
        ).toEqual(['evil.declared']);
        expect(app!.get(SkillRegistry).get('evil.declared')?.parameters).toEqual({
          type: 'object',
          properties: { city: { type: 'string' } },
        });
        expect(logs).toContainEqual(expect.stringMatching(/tool 'tuple' is not registered .*prefixItems/));
        expect(logs).toContainEqual(expect.stringMatching(/tool 'foreign' is not registered .*my-dialect/));
      } finally {
        await app?.close();
      }
    } finally {
      await server.close();
    }
  });

  it('refuses an era the entry cannot have, naming the values', async () => {
    await expect(boot({ name: 'weather', url: 'http://127.0.0.1:1/mcp', era: '2026' as never })).rejects.toThrow(
      /Invalid mcpServers\[0\] \('weather'\): era must be 'auto' .*'legacy' .*'modern'/,
    );
  });
});
