import { join } from 'node:path';
import { spawn } from 'node:child_process';

/** Runs the fixture child with `kind`: its exit code and everything it wrote. */
function child(kind: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const proc = spawn(
      process.execPath,
      [
        '-r',
        join(__dirname, '..', '..', '..', '..', 'scripts', 'register-ts.js'),
        `${__dirname}/__fixtures__/rejection-net-child.ts`,
        kind,
      ],
      { cwd: `${__dirname}/../../../..`, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    proc.on('exit', (code) => resolve({ code, out }));
  });
}

describe('the unhandled-rejection net of cluster mode (a real child process)', () => {
  it('contains a rejection nobody awaited from a terminated connection: logged, counted, the process lives (attack: PostgreSQL restarted under pg-boss)', async () => {
    const { code, out } = await child('database');
    expect(out).toContain('Contained an unhandled rejection of a lost database connection (1 so far');
    expect(out).toContain('COUNTS {"contained":1,"raised":0}');
    expect(code).toBe(0);
  }, 60_000);

  it('does not swallow a bug: logged with its stack and counted, then raised as Node would (the process exits)', async () => {
    const { code, out } = await child('bug');
    expect(out).toMatch(
      /Unhandled rejection \(1 so far\), not a lost database: a bug to fix\. TypeError: boss\.compelte is not a function\n\s+at /,
    );
    expect(out).not.toContain('COUNTS');
    expect(code).not.toBe(0);
  }, 60_000);

  it('is gone once released: Node decides again', async () => {
    const { code, out } = await child('released');
    expect(out).not.toContain('Contained');
    expect(code).not.toBe(0);
  }, 60_000);
});
