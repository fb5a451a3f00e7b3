import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The MCP client SDK is an optional peer dependency of @zmodu/agent: importing the package loads none of it, an
// AgentModule without mcpServers boots without it, and one with mcpServers fails at boot naming the package.
const ROOT = join(__dirname, '..', '..', '..', '..');
const FIXTURES = join(__dirname, '..', '__fixtures__');

it('imports and boots without the MCP client SDK; with mcpServers, boot fails naming the package to install', () => {
  const run = spawnSync(
    process.execPath,
    ['-r', join(ROOT, 'scripts', 'register-ts.js'), '-r', join(FIXTURES, 'hide-mcp-sdk.js'), join(FIXTURES, 'without-sdk.ts')],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as {
    afterImport: string[];
    without: unknown;
    afterBoot: string[];
    withServers: { name: string; message: string };
  };
  expect(out.afterImport).toEqual([]);
  expect(out.without).toBeNull();
  expect(out.afterBoot).toEqual([]);
  expect(out.withServers).toEqual({
    name: 'McpClientSdkMissingException',
    message:
      'AgentModule has mcpServers, which need the MCP client SDK, an optional peer dependency of @zmodu/agent that is not installed: run `npm install @modelcontextprotocol/client@^2.4.0` (or remove mcpServers).',
  });
});
