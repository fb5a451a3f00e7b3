import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EmbeddedDatabaseLockedException } from '@zmodu/db';
import { JsonLogger } from './logging/json-logs.module';
import { AppModule } from './app.module';
import { mintToken } from './auth/dev-token';
import { ConfigError, databaseDescription, docsFromEnv, jwtSecretFromEnv, loggingFromEnv, optionsFromEnv } from './config';
import { runDemo } from './demo';
import { serveHttp } from './http';
import { drainOnSignal } from './shutdown';

const USAGE = `usage:
  node dist/apps/sample/main.js              serve the sample over HTTP (PORT, default 3000)
  node dist/apps/sample/main.js demo         run the demo and exit (offline, or on a real model: OPENAI_API_KEY, ANTHROPIC_API_KEY)
  node dist/apps/sample/main.js token [--tenant acme] [--user alice] [--permissions a,b] [--expires 1h]
                                             print a development bearer token (signed with ZMODU_JWT_SECRET)`;

async function serve(): Promise<void> {
  const fromEnv = { ...optionsFromEnv(), logging: loggingFromEnv() };
  // The database is opened before Nest starts: an embedded folder that another process holds is told in one line by
  // main's handler, not as a failed boot with a stack.
  const dataSource = await fromEnv.dataSource();
  const options = { ...fromEnv, dataSource: async () => dataSource };
  // Nest's own lines too go to the JSON logs (held until the logger is ready).
  const app = await NestFactory.create(AppModule.register(options), { bufferLogs: true });
  app.useLogger(app.get(JsonLogger));
  // The security headers before anything answers, and GET /docs (Swagger UI) and /docs-json when ZMODU_DOCS allows.
  serveHttp(app, { docs: docsFromEnv() });
  // SIGTERM drains HTTP first (kept-alive connections included), then runs the shutdown hooks.
  drainOnSignal(app, { drainMs: Number(process.env.ZMODU_DRAIN_MS ?? 10_000) });
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, process.env.HOST ?? '127.0.0.1');
  new Logger('Sample').log(
    `trading assistant on http://127.0.0.1:${port} (${databaseDescription()}; ${options.model.description}); mint a token with: npm run token`,
  );
}

function token(args: string[]): number {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i];
    const value = args[i + 1];
    if (!['--tenant', '--user', '--permissions', '--expires'].includes(key) || value === undefined || value.startsWith('--')) {
      process.stderr.write(`bad flag ${key ?? ''}\n${USAGE}\n`);
      return 2;
    }
    flags.set(key, value);
  }
  const permissions = flags
    .get('--permissions')
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  process.stdout.write(
    // Minting a token is a development tool: without ZMODU_JWT_SECRET it signs with the development secret (ZMODU_DEV=1).
    `${mintToken(jwtSecretFromEnv({ ...process.env, ZMODU_DEV: '1' }), {
      tenant: flags.get('--tenant') ?? 'acme',
      user: flags.get('--user') ?? 'alice',
      permissions,
      expiresIn: flags.get('--expires'),
    })}\n`,
  );
  return 0;
}

async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'serve':
      await serve();
      return undefined;
    case 'demo':
      return runDemo();
    case 'token':
      return token(rest);
    case '--help':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      process.stderr.write(`unknown command '${command}'\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (err: unknown) => {
    // A setting to fix, or the data folder another process holds: the message says what to do (a stack would not help).
    const told = err instanceof ConfigError || err instanceof EmbeddedDatabaseLockedException;
    process.stderr.write(`${told ? `error: ${err.message}` : ((err as Error)?.stack ?? String(err))}\n`);
    process.exit(1);
  },
);
