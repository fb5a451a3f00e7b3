#!/usr/bin/env node
// The `zmodu` command: run main, exit with its code (2 on a usage error, 1 on any other failure).
import { UsageError } from './cli-config';
import { main } from './main';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`zmodu: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
