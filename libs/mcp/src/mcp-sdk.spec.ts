import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The MCP server SDK is an optional peer dependency of @zmodu/mcp: importing the package loads none of it, and
// McpModule fails at boot naming the package to install. In a child process whose require cannot find the SDK.
const ROOT = join(__dirname, '..', '..', '..');

it('imports without the MCP server SDK, and McpModule fails at boot naming the package to install', () => {
  const run = spawnSync(
    process.execPath,
    [
      '-r',
      join(ROOT, 'scripts', 'register-ts.js'),
      '-r',
      join(__dirname, '__fixtures__', 'hide-mcp-sdk.js'),
      join(__dirname, '__fixtures__', 'without-sdk.ts'),
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  expect(run.stderr).not.toMatch(/Error/);
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { afterImport: string[]; error: { name: string; message: string } };
  expect(out.afterImport).toEqual([]);
  expect(out.error).toEqual({
    name: 'McpSdkMissingException',
    message:
      'McpModule needs the MCP server SDK, an optional peer dependency of @zmodu/mcp that is not installed: run `npm install @modelcontextprotocol/server@^2.4.0`.',
  });
});
