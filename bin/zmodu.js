#!/usr/bin/env node
// The zmodu CLI, run from the repository's TypeScript sources (npx zmodu ...). The published
// @zmodu/cli package runs the same apps/cli/src/bin.ts, compiled (npm run build:packages).
const { join } = require('node:path');

const root = join(__dirname, '..');
process.env.TS_NODE_PROJECT = process.env.TS_NODE_PROJECT || join(root, 'tsconfig.json');
process.env.TS_NODE_TRANSPILE_ONLY = 'true';
require('ts-node/register/transpile-only');
require('tsconfig-paths').register({ baseUrl: root, paths: require(join(root, 'tsconfig.json')).compilerOptions.paths });
require(join(root, 'apps', 'cli', 'src', 'bin.ts'));
