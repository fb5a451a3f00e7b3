// Run with node -r scripts/register-ts.js -r ./hide-mcp-sdk.js <this file>: @zmodu/agent in an application without the
// MCP client SDK. Prints one JSON line: what importing the package loaded, that AgentModule boots without mcpServers,
// and how it fails with them.
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { AgentModule, ScriptedModelProvider } from '../index';

const loaded = () => Object.keys(require.cache).filter((file) => file.includes('@modelcontextprotocol'));
const agent = {
  name: 'a',
  provider: new ScriptedModelProvider([{ text: 'x' }]),
  skills: ['weather.now'],
  guard: { allow: ['weather.now'] },
};
const guard = { auditStore: 'memory', quotaStore: 'memory' } as const;

async function boot(withServers: boolean): Promise<{ name: string; message: string } | null> {
  try {
    const mcpServers = withServers ? [{ name: 'weather', url: 'http://127.0.0.1:1/mcp' }] : undefined;
    const app = await Test.createTestingModule({
      imports: [AgentModule.forRoot({ agents: [agent], guard, ...(mcpServers ? { mcpServers } : {}) })],
    }).compile();
    await app.init();
    await app.close();
    return null;
  } catch (err) {
    return { name: (err as Error).name, message: (err as Error).message };
  }
}

async function main(): Promise<void> {
  const afterImport = loaded();
  const without = await boot(false);
  const afterBoot = loaded();
  const withServers = await boot(true);
  process.stdout.write(`${JSON.stringify({ afterImport, without, afterBoot, withServers })}\n`);
}

void main();
