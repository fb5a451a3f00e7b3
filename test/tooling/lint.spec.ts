import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

describe('npm run lint', () => {
  jest.setTimeout(300_000);
  const probe = join(ROOT, 'test', 'fixtures', `unformatted-probe-${process.pid}.ts`);

  afterAll(() => rmSync(probe, { force: true }));

  it('fails on a file Prettier would change, naming it', async () => {
    // Valid TypeScript that ESLint accepts, formatted as nobody should.
    writeFileSync(probe, 'export const probe   =   {a:1,\n  b:   [1,2,3]}\n');
    // npm run lint ends with its format check of the whole repository (ESLint and tsc before it, which CI runs anyway):
    // that check, given the probe's path, reads it under the same .prettierignore and configuration.
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scripts.lint).toMatch(/&& npm run lint:format$/);
    expect(scripts['lint:format']).toBe('prettier --check .');
    const run = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(
        process.execPath,
        [require.resolve('prettier/bin/prettier.cjs'), '--check', probe],
        { cwd: ROOT, timeout: 280_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      ),
    );
    expect(run.code).not.toBe(0);
    expect(run.output).toContain(`test/fixtures/unformatted-probe-${process.pid}.ts`);
    expect(run.output).toMatch(/Code style issues found/);
  });
});
