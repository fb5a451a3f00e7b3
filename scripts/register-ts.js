// Runs the repository's TypeScript sources in a child process (node -r ./scripts/register-ts.js file.ts): what
// `-r ts-node/register/transpile-only -r tsconfig-paths/register` does (each file transpiled alone, with the root
// tsconfig's options, the @zmodu/* paths resolved), with the output cached on disk by content, so that the CLI and the
// sample started many times over (the tests, `npx zmodu`) transpile each file once, not at every start.
// The cache is node_modules/.cache/zmodu-ts, with Node's compile cache in node_modules/.cache/zmodu-node (ZMODU_TS_CACHE=0
// turns both off); a changed file or option is a new entry.
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const root = join(__dirname, '..');
const configFile = join(root, 'tsconfig.json');
const cacheDir = process.env.ZMODU_TS_CACHE === '0' ? null : join(root, 'node_modules', '.cache', 'zmodu-ts');
if (cacheDir) mkdirSync(cacheDir, { recursive: true });

// TypeScript itself (200 ms to load) only when a file is not in the cache: the options it reads from tsconfig.json are
// cached too, keyed by its version and the file's text.
let typescript;
const ts = () => (typescript ??= require('typescript'));
const tsVersion = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version;
const optionsKey = createHash('sha256').update(tsVersion).update('\0').update(readFileSync(configFile)).digest('hex');
const optionsFile = cacheDir && join(cacheDir, `options-${optionsKey}.json`);

function readOptions() {
  if (optionsFile)
    try {
      return JSON.parse(readFileSync(optionsFile, 'utf8'));
    } catch {
      // not cached yet
    }
  const parsed = ts().getParsedCommandLineOfConfigFile(
    configFile,
    {},
    { ...ts().sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!parsed) throw new Error(`scripts/register-ts.js could not read ${configFile}`);
  const options = {
    compilerOptions: {
      ...parsed.options,
      module: ts().ModuleKind.CommonJS,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      inlineSourceMap: true,
      inlineSources: false,
      noEmit: false,
    },
    paths: parsed.options.paths ?? {},
  };
  if (optionsFile) writeWhole(optionsFile, JSON.stringify(options));
  return options;
}

/** Written whole, then renamed: a process reading it at the same time sees the old state or the new, never half. */
function writeWhole(path, text) {
  const partial = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(partial, text);
    renameSync(partial, path);
  } catch {
    // a cache that cannot be written costs time only
  }
}

const { compilerOptions, paths } = readOptions();
const salt = createHash('sha256').update(tsVersion).update(JSON.stringify(compilerOptions)).digest('hex');
process.setSourceMapsEnabled(true);
// Node's own compile cache (V8's code of every module, ours and node_modules', kept on disk), where Node has it (22.1+).
const { enableCompileCache } = require('node:module');
if (cacheDir && typeof enableCompileCache === 'function') enableCompileCache(join(root, 'node_modules', '.cache', 'zmodu-node'));

function transpile(source, filename) {
  const key = cacheDir && createHash('sha256').update(salt).update(filename).update('\0').update(source).digest('hex');
  const cached = key && join(cacheDir, `${key}.js`);
  if (cached)
    try {
      return readFileSync(cached, 'utf8');
    } catch {
      // not cached yet
    }
  const out = ts().transpileModule(source, { compilerOptions, fileName: filename, reportDiagnostics: false }).outputText;
  if (cached) writeWhole(cached, out);
  return out;
}

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  module._compile(transpile(readFileSync(filename, 'utf8'), filename), filename);
};

require('tsconfig-paths').register({ baseUrl: root, paths });
