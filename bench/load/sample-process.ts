import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, WriteStream } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/free-port';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', 'scripts', 'register-ts.js');

const ROOT = join(__dirname, '..', '..');
export const BUILT_MAIN = join(ROOT, 'dist', 'apps', 'sample', 'main.js');

export interface SampleProcessOptions {
  readonly jwtSecret: string;
  /** A PostgreSQL URL; absent: embedded PGlite in `dataDir`. */
  readonly databaseUrl?: string;
  readonly dataDir: string;
  /** Run apps/sample/src/main.ts through ts-node instead of the build. */
  readonly tsNode: boolean;
  /** The sample's own settings for the load (the edge's rate limit, the trader's daily tokens), as environment variables. */
  readonly env: Readonly<Record<string, string>>;
  /** Where the sample's stdout and stderr go (its JSON log lines). */
  readonly logFile: string;
}

export interface MemoryReading {
  readonly gc: boolean;
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** The sample as a separate process on a loopback port, with bench/load/memory-probe.js preloaded on an IPC channel. */
export class SampleProcess {
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly log: WriteStream;
  /** Log lines of level warn (40) and above, as the sample wrote them. */
  readonly warnings: string[] = [];
  /** The last lines the sample wrote. */
  readonly tail: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    logFile: string,
  ) {
    this.log = createWriteStream(logFile);
    let partial = '';
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (isWarning(line)) this.warnings.push(line);
        this.tail.push(line);
        if (this.tail.length > 20) this.tail.shift();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  static async start(options: SampleProcessOptions): Promise<SampleProcess> {
    if (!options.tsNode && !existsSync(BUILT_MAIN))
      throw new Error(`${BUILT_MAIN} is missing: run \`npm run build\` first (npm run load does), or pass --ts-node`);
    const port = await freePort();
    const entry = options.tsNode ? ['-r', REGISTER_TS, join(ROOT, 'apps', 'sample', 'src', 'main.ts')] : [BUILT_MAIN];
    const env: NodeJS.ProcessEnv = { ...process.env };
    // The scripted model, whatever keys the shell has; a database of the load run's own.
    for (const name of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'OPENAI_BASE_URL',
      'ANTHROPIC_BASE_URL',
      'ZMODU_MODEL',
      'DATABASE_URL',
      'ZMODU_QUEUE',
    ])
      delete env[name];
    Object.assign(env, {
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      ZMODU_JWT_SECRET: options.jwtSecret,
      ZMODU_MODEL_PROVIDER: 'scripted',
      ZMODU_DATA_DIR: options.dataDir,
      ZMODU_DRAIN_MS: '2000',
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      ...options.env,
    });
    const child = spawn(process.execPath, ['--expose-gc', '-r', join(__dirname, 'memory-probe.js'), ...entry], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const sample = new SampleProcess(child, `http://127.0.0.1:${port}`, options.logFile);
    try {
      await sample.waitReady(180_000);
    } catch (err) {
      await sample.stop(5000);
      throw new Error(`${(err as Error).message}; its last lines:\n${sample.tail.join('\n')}`);
    }
    return sample;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process has exited (and how), or null while it runs. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.exit;
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exit) throw new Error(`the sample exited while starting (code ${this.exit.code}, signal ${this.exit.signal})`);
      try {
        const res = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`the sample was not ready within ${timeoutMs} ms`);
  }

  /** process.memoryUsage() of the sample, after a full GC (the probe runs one when --expose-gc allows it). */
  memory(timeoutMs = 10_000): Promise<MemoryReading> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`no memory reading from the sample within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: unknown) => {
        const m = message as { type?: string } & MemoryReading;
        if (m?.type !== 'memory') return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(m);
      };
      this.child.on('message', onMessage);
      this.child.send({ type: 'memory' });
    });
  }

  /** SIGTERM (the sample drains and flushes), SIGKILL after `graceMs`; the exit code and signal. */
  async stop(graceMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
    if (!this.exit) this.child.kill('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      this.child.kill('SIGKILL');
    }, graceMs);
    const status = await this.exited;
    clearTimeout(timer);
    await new Promise<void>((resolve) => this.log.end(resolve));
    return { ...status, killed };
  }
}

/** A pino line of level warn (40) or above, or a line that is not JSON on stderr (a stack, a Node warning). */
function isWarning(line: string): boolean {
  if (!line.trim()) return false;
  try {
    const parsed = JSON.parse(line) as { level?: number };
    return typeof parsed.level === 'number' && parsed.level >= 40;
  } catch {
    // The development-secret warning is not printed (ZMODU_JWT_SECRET is set); anything else that is not JSON is noted.
    return true;
  }
}
