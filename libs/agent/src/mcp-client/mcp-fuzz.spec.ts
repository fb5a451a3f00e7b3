import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { SkillRegistry } from '@zmodu/skills';
import { HostileTool, startHostile } from '../__fixtures__/hostile-mcp-http';
import { logsOf } from '../__fixtures__/logs-of';
import { AgentModule } from '../agent.module';
import { AgentRegistry } from '../agent.registry';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { mcpToolSegment } from './mcp-tool-name';

/**
 * Huge MCP schemas, fuzzed with fast-check (seeded: ZMODU_FUZZ_SEED and ZMODU_FUZZ_RUNS change the cases): tool lists
 * of giant, deep, wide and odd schemas, names and descriptions, served by a hostile server. Boot never fails for them,
 * and what is registered (so sent to the model with every request) stays within maxSchemaBytes, maxDescriptionLength
 * and maxToolBytesPerServer.
 */
const SEED = Number(process.env.ZMODU_FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.ZMODU_FUZZ_RUNS ?? 25);
// A page of 8 tools of 3 MB twice fits in maxMessageBytes: here the tools' own caps are under test, not the transport's.
const CAPS = { maxSchemaBytes: 16 * 1024, maxDescriptionLength: 2000, maxToolBytesPerServer: 40 * 1024, maxMessageBytes: 64 * 1024 * 1024 };

const big = fc.integer({ min: 1, max: 3_000_000 }).map((n) => 'z'.repeat(n));
const schema = fc.oneof(
  // Giant: one string of up to 3 MB in a description or an enum.
  big.map((text) => ({ type: 'object', properties: { q: { type: 'string', description: text } } })),
  big.map((text) => ({ type: 'object', properties: { q: { enum: [text] } } })),
  // Wide: thousands of properties.
  fc.integer({ min: 1, max: 20_000 }).map((n) => ({
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'integer' }])),
  })),
  // Deep: nested objects, past and within the registry's depth limit (the fixture's SDK server cannot send 2500).
  fc.integer({ min: 1, max: 2000 }).map((depth) => {
    let s: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < depth; i++) s = { type: 'object', properties: { x: s } };
    return s;
  }),
  // Small and valid, so that some fit.
  fc.constant({ type: 'object', properties: { city: { type: 'string', maxLength: 50 } } }),
);
const name = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/),
  fc.integer({ min: 129, max: 50_000 }).map((n) => 'N'.repeat(n)),
  fc.constantFrom('', '__proto__', 'constructor', 'tool\nname', 'é'),
);
const description = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 50 }), big);
const tool = fc.record({ name, description, inputSchema: schema });

describe('fuzz: huge MCP schemas (fast-check, seeded)', () => {
  it('boots against any tool list, and registers only what fits the caps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(tool, { minLength: 1, maxLength: 8 }), async (tools) => {
        const served: HostileTool[] = tools.map((t) => ({ ...t, annotations: { readOnlyHint: true } }));
        const allow = [...new Set(served.filter((t) => t.name.length <= 128).map((t) => `evil.${mcpToolSegment(t.name)}`))].filter((n) =>
          /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(n),
        );
        const server = await startHostile(served);

        try {
          const agent = {
            name: 'a',
            provider: new ScriptedModelProvider([{ text: 'x' }]),
            skills: allow,
            guard: { allow: allow.length ? allow : ['evil.none'] },
          };
          let registered: { parameters: unknown; description: string }[] = [];
          let offered = '';
          await logsOf(async () => {
            const app = await Test.createTestingModule({
              imports: [
                AgentModule.forRoot({
                  agents: [agent],
                  mcpServers: [{ name: 'evil', url: server.url, connectTimeoutMs: 60_000, ...CAPS }],
                  guard: { auditStore: 'memory', quotaStore: 'memory' },
                }),
              ],
            }).compile();
            await app.init();
            const skills = app.get(SkillRegistry);
            registered = skills
              .list()
              .filter((s) => s.name.startsWith('evil.'))
              .map((s) => skills.get(s.name)!);
            offered = JSON.stringify(app.get(AgentRegistry).get('a').tools());
            await app.close();
          });
          let total = 0;
          for (const skill of registered) {
            const bytes = Buffer.byteLength(JSON.stringify(skill.parameters));
            expect(bytes).toBeLessThanOrEqual(CAPS.maxSchemaBytes);
            expect(skill.description.length).toBeLessThanOrEqual(CAPS.maxDescriptionLength);
            total += bytes + Buffer.byteLength(skill.description);
          }
          expect(total).toBeLessThanOrEqual(CAPS.maxToolBytesPerServer);
          // What one model request carries of this server's tools.
          expect(Buffer.byteLength(offered)).toBeLessThan(CAPS.maxToolBytesPerServer + 8 * 1024);
        } finally {
          await server.close();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 300_000);
});
