// node scripts/check-esm-exports.mjs <specifier>...: every export an entry point gives require() must be a named export
// an ES module can import. Our packages are CommonJS (tsc's output); Node's ESM loader finds the names of a CommonJS
// module by reading its code (cjs-module-lexer), not by running it, so an export it cannot see statically
// (`Object.assign(exports, ...)`, `module.exports = build()`) is missing from `import { name }` and from
// `import * as m`. Each specifier is resolved from the current folder (as require() resolves it: our packages' exports
// have one condition, `default`, for both), imported first, then required, and the names and the values compared. Prints one line per entry; exits 1 naming every difference.
// scripts/build-packages.js runs it on every package's entry points after the build.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// What ESM adds to the namespace of a CommonJS module: the module itself (`default`, and `module.exports` on newer
// Node), and tsc's `__esModule` marker.
const ADDED = new Set(['default', 'module.exports', '__esModule']);

const specifiers = process.argv.slice(2);
if (!specifiers.length) {
  process.stderr.write('usage: node scripts/check-esm-exports.mjs <package or package/entry>...\n');
  process.exit(2);
}
const here = pathToFileURL(join(process.cwd(), 'noop.js')).href;
const require = createRequire(here);
const problems = [];
for (const specifier of specifiers) {
  let namespace;
  let cjs;
  try {
    namespace = await import(pathToFileURL(require.resolve(specifier)).href);
    cjs = require(specifier);
  } catch (err) {
    problems.push(`${specifier} does not load: ${err?.message ?? err}`);
    continue;
  }
  const seen = Object.keys(namespace).filter((k) => !ADDED.has(k));
  const given = Object.keys(cjs).filter((k) => k !== '__esModule');
  const missing = given.filter((k) => !seen.includes(k));
  const extra = seen.filter((k) => !Object.hasOwn(cjs, k));
  const different = seen.filter((k) => Object.hasOwn(cjs, k) && namespace[k] !== cjs[k]);
  if (missing.length)
    problems.push(
      `${specifier}: ESM cannot see ${missing.join(', ')} (export each with a plain \`export\` statement, which tsc compiles ` +
        'to a form cjs-module-lexer reads, not by assigning to exports at run time)',
    );
  if (extra.length) problems.push(`${specifier}: ESM sees ${extra.join(', ')}, which require() does not give`);
  if (different.length) problems.push(`${specifier}: import and require() give different values for ${different.join(', ')}`);
  process.stdout.write(`${specifier}: ${seen.length} named exports from ESM, ${given.length} from require()\n`);
}
if (problems.length) process.stderr.write(`Exports ESM cannot import:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
// Loading the packages may start timers (a pool, a worker): leave now.
process.exit(problems.length ? 1 : 0);
