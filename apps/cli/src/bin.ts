#!/usr/bin/env node
// The `zmodu` command: run main, exit with its code (2 on a usage error, 1 on any other failure).
import { UsageError } from './cli-config';
import { main } from './main';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = (err as { message?: unknown } | null)?.message;
    process.stderr.write(`zmodu: ${message ? String(message) : String(err)}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
