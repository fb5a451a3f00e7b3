import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');

/** The verdict of @seriousme/openapi-schema-validator (its CLI: the package is ESM only) on an OpenAPI document. */
export async function validateOpenApi(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const dir = await mkdtemp(join(tmpdir(), 'zmodu-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const out = await new Promise<string>((resolve) => execFile(process.execPath, [CLI, file], (_err, stdout) => resolve(stdout)));
    return JSON.parse(out) as { valid: boolean; errors?: unknown };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
