import { execFile, execFileSync } from 'node:child_process';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { serverDataSourceOptions } from '@zmodu/db';
import { AppModule } from '../../apps/sample/src/app.module';
import { SampleAppOptions } from '../../apps/sample/src/sample.options';
import { freePort } from './free-port';

/** scripts/postgres.sh: start, stop, pause (an outage or a restart: the data is kept) and resume a server of one's own. */
export const POSTGRES_SCRIPT = `${__dirname}/../../scripts/postgres.sh`;

/** scripts/postgres.sh with these arguments; rejects with its stderr. */
function postgresScript(args: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    execFile(POSTGRES_SCRIPT, args, (err, _stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve())),
  );
}

/**
 * An outage of the server in `dir`: stopped (pg_ctl's `fast` shutdown terminates the sessions with 57P01, `immediate`
 * kills them and leaves crash recovery to the next start), its data kept.
 */
export function pausePostgres(dir: string, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  return postgresScript(['pause', dir, mode]);
}

/** Start the paused server in `dir` again (same port, same data). */
export function resumePostgres(dir: string): Promise<void> {
  return postgresScript(['resume', dir]);
}

/** The sample on a PostgreSQL server of its own (for faults: the test stops and starts the server). */
export interface OwnServerApp {
  readonly url: string;
  readonly dir: string;
  readonly app: INestApplication;
}

/** More options of the sample (e.g. `model`), or what gives them once the suite starts (e.g. after a model server). */
export type SampleOver = Partial<SampleAppOptions> | (() => Promise<Partial<SampleAppOptions>>);

/** `over`: more options of the sample (e.g. `model`). */
export async function sampleOnOwnServer(jwtSecret: string, over: Partial<SampleAppOptions> = {}): Promise<OwnServerApp> {
  const [url, dir] = execFileSync(POSTGRES_SCRIPT, ['start', String(await freePort())], { encoding: 'utf8' })
    .trim()
    .split(' ');
  const moduleRef = await Test.createTestingModule({
    imports: [
      AppModule.register({
        dataSource: async () => serverDataSourceOptions(url, { extra: { connectionTimeoutMillis: 1000 } }),
        jwtSecret,
        ...over,
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication();
  await app.init();
  return { url, dir, app };
}

export async function stopOwnServer(own: OwnServerApp | undefined): Promise<void> {
  await own?.app.close().catch(() => undefined);
  if (own?.dir) execFileSync(POSTGRES_SCRIPT, ['stop', own.dir]);
}

/**
 * The sample on a PostgreSQL server of its own for the enclosing describe: started in a beforeAll (handed to `ready`),
 * closed and removed in an afterAll (before the afterAll hooks the spec declares after this call).
 */
export function sampleOnOwnServerForSuite(jwtSecret: string, ready: (own: OwnServerApp) => void, over: SampleOver = {}): void {
  let own: OwnServerApp | undefined;
  beforeAll(async () => {
    own = await sampleOnOwnServer(jwtSecret, typeof over === 'function' ? await over() : over);
    ready(own);
  }, 120_000);
  afterAll(async () => {
    await stopOwnServer(own);
  });
}
