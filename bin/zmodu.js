#!/usr/bin/env node
// The zmodu CLI, run from the repository's TypeScript sources (npx zmodu ...).
const { join } = require('node:path');

const root = join(__dirname, '..');
process.env.TS_NODE_PROJECT = process.env.TS_NODE_PROJECT || join(root, 'tsconfig.json');
process.env.TS_NODE_TRANSPILE_ONLY = 'true';
require('ts-node/register/transpile-only');
require('tsconfig-paths').register({ baseUrl: root, paths: require(join(root, 'tsconfig.json')).compilerOptions.paths });
const { main } = require(join(root, 'apps', 'cli', 'src', 'main.ts'));
const { UsageError } = require(join(root, 'apps', 'cli', 'src', 'cli-config.ts'));

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`zmodu: ${err && err.message ? err.message : String(err)}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
