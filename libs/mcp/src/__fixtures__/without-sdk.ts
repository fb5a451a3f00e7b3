// Run with node -r scripts/register-ts.js -r ./hide-mcp-sdk.js <this file>: @zmodu/mcp in an application without the
// MCP server SDK. Prints one JSON line: what was loaded by importing the package, and how booting McpModule failed.
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { GuardModule } from '@zmodu/guard';
import { SkillsModule } from '@zmodu/skills';
import { McpModule } from '../index';

const loaded = () => Object.keys(require.cache).filter((file) => file.includes('@modelcontextprotocol'));

async function main(): Promise<void> {
  const afterImport = loaded();
  let error: { name: string; message: string } | null = null;
  try {
    const app = await Test.createTestingModule({
      imports: [
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        McpModule.forRoot({ policy: { allow: [] } }),
      ],
    }).compile();
    await app.close();
  } catch (err) {
    error = { name: (err as Error).name, message: (err as Error).message };
  }
  process.stdout.write(`${JSON.stringify({ afterImport, error })}\n`);
}

void main();
