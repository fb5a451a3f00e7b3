#!/usr/bin/env node
// The zmodu CLI, run from the repository's TypeScript sources (npx zmodu ...), each file transpiled once and cached
// (scripts/register-ts.js). The published @zmodu/cli package runs the same apps/cli/src/bin.ts, compiled
// (npm run build:packages).
const { join } = require('node:path');

const root = join(__dirname, '..');
require(join(root, 'scripts', 'register-ts.js'));
require(join(root, 'apps', 'cli', 'src', 'bin.ts'));
