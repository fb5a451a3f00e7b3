// npm run build:packages: compile every library and the CLI with tsc into its own dist/, in the
// direction of imports (docs/architecture.md, the library map), each against the declarations of the ones built before it
// (@zmodu/<name> resolves through the workspace links in node_modules, not the path aliases).
// Then every entry point (its `exports`, or `main`) must give ESM the names it gives require(): the packages are CommonJS
// that Node's ESM loader reads statically (scripts/check-esm-exports.mjs), so a name it cannot see fails the build.
// npm run pack:packages (--pack): then `npm pack` each into dist/packs (or --out DIR).
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { builtinModules } = require('node:module');
const { join, resolve } = require('node:path');

const root = join(__dirname, '..');
// In the order of their declared @zmodu dependencies (scripts/libraries.js: one list, from the package.json files).
const PACKAGES = require('./libraries')
  .buildOrder()
  .map((p) => p.dir);

const args = process.argv.slice(2);
const pack = args.includes('--pack');
const outIndex = args.indexOf('--out');
const outDir = resolve(root, outIndex >= 0 ? args[outIndex + 1] : join('dist', 'packs'));
const tsc = require.resolve('typescript/bin/tsc');

const entryPoints = [];
for (const dir of PACKAGES) {
  const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  entryPoints.push(...entryPointsOf(manifest));
  const started = Date.now();
  rmSync(join(root, dir, 'dist'), { recursive: true, force: true });
  execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  checkDeclared(dir, manifest);
  // @zmodu/admin ships the approvals console built (console-dist: static files served by its ConsoleController).
  if (dir === 'libs/admin') execFileSync('npm', ['run', '-s', 'build:console'], { cwd: root, stdio: 'inherit' });
  process.stderr.write(`built ${manifest.name} (${dir}/dist) in ${Date.now() - started} ms\n`);
}

{
  const started = Date.now();
  execFileSync(process.execPath, [join(__dirname, 'check-esm-exports.mjs'), ...entryPoints], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.stderr.write(`checked the named exports ESM sees in ${entryPoints.length} entry points in ${Date.now() - started} ms\n`);
}

/** The specifiers an application imports: `@zmodu/x` and each `@zmodu/x/<entry>` of `exports` (or `main` alone). */
function entryPointsOf(manifest) {
  if (!manifest.exports) return manifest.main ? [manifest.name] : [];
  return Object.keys(manifest.exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`));
}

/** Every package the compiled code requires is a dependency or a peer of it (hoisting would hide a missing one). */
function checkDeclared(dir, manifest) {
  const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
  const missing = new Set();
  const files = readdirSync(join(root, dir, 'dist'), { recursive: true }).filter((f) => f.endsWith('.js'));
  for (const file of files) {
    const code = readFileSync(join(root, dir, 'dist', file), 'utf8');
    for (const [, spec] of code.matchAll(/require\(["']([^"'.][^"']*)["']\)/g)) {
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (!spec.startsWith('node:') && !builtinModules.includes(name) && !declared.has(name)) missing.add(`${name} (${dir}/dist/${file})`);
    }
  }
  if (missing.size) throw new Error(`${manifest.name} requires packages its package.json does not declare: ${[...missing].join(', ')}`);
}

if (pack) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const dir of PACKAGES) {
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], { cwd: join(root, dir), encoding: 'utf8' });
    const file = out.trim().split('\n').pop();
    if (!existsSync(join(outDir, file))) throw new Error(`npm pack in ${dir} did not write ${file}`);
    process.stdout.write(`${join(outDir, file)}\n`);
  }
}
