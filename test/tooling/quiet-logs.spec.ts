import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Runs the probe spec with the repository's test environment and logger hook, as `npm test` does (under --experimental-vm-modules: jest requires the ESM-only Nest 12 packages through it). */
function runProbe(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const config = {
    rootDir: ROOT,
    testMatch: ['<rootDir>/test/fixtures/quiet/*.probe.ts'],
    transform: { '^.+\\.ts$': 'ts-jest' },
    testEnvironment: '<rootDir>/test/support/quiet-environment.js',
    setupFilesAfterEnv: ['<rootDir>/test/support/quiet-logger.js'],
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--experimental-vm-modules', join(ROOT, 'node_modules/jest/bin/jest.js'), '--config', JSON.stringify(config), '--colors=false'],
      { cwd: ROOT, env: { ...process.env, ...env, FORCE_COLOR: '0' }, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: (stdout + stderr).replace(ANSI, '') }),
    );
  });
}

describe('quiet tests', () => {
  jest.setTimeout(180_000);

  it('does not print what a passing test logs on purpose', async () => {
    const run = await runProbe({ ZMODU_PROBE_FAIL: '0', ZMODU_TEST_LOGS: '' });
    expect(run.code).toBe(0);
    expect(run.output).toMatch(/2 passed/);
    expect(run.output).not.toMatch(/provoked-on-purpose|ERROR|the-line-before-the-failure/);
  });

  it('prints the logs of a failing test, and everything with ZMODU_TEST_LOGS=1', async () => {
    const failing = await runProbe({ ZMODU_PROBE_FAIL: '1', ZMODU_TEST_LOGS: '' });
    expect(failing.code).toBe(1);
    expect(failing.output).toMatch(/the-line-before-the-failure/);
    expect(failing.output).not.toMatch(/provoked-on-purpose/);
    const loud = await runProbe({ ZMODU_PROBE_FAIL: '0', ZMODU_TEST_LOGS: '1' });
    expect(loud.code).toBe(0);
    expect(loud.output).toMatch(/ERROR \[Probe\] provoked-on-purpose\s+Error: expected failure/);
  });
});
