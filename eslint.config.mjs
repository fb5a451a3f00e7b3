import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { createRequire } from 'node:module';

const { libraries } = createRequire(import.meta.url)('./scripts/libraries.js');
const LIBRARIES = libraries();

// The direction of imports (docs/architecture.md, the library map) is what each package declares: a library may import
// the @zmodu packages of its package.json (dependencies and peers) and no other (scripts/libraries.js: one list, so the
// layering cannot drift from what ships). db and guard declare none; skills declares guard and db; data, outbox and memory
// skills, guard and db; pipeline skills and guard; agent skills, guard and db; mcp skills and guard; http what it runs;
// admin what it serves. The apps only through the @zmodu/<name> entry points; libraries never from apps/ or test/.
const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const fromApps = { group: ['**/apps/**'], message: 'libraries never import from apps/' };
const fromTest = { group: ['**/test/**'], message: 'libraries never import from test/: use @zmodu/<name>/testing' };
const deep = {
  group: ['@zmodu/*/*', '!@zmodu/*/testing', '!@zmodu/*/internal'],
  message: 'import a library only through @zmodu/<name> (or @zmodu/<name>/testing in tests, @zmodu/<name>/internal between libraries)',
};
// What the packages share and an application must not use: @zmodu/core and each package's /internal entry. Admitted from
// libs/, apps/cli (our CLI), test/ and bench/; never from the sample, which is what users copy (nor examples/ and docs/,
// which use the published entry points: test:packages and readme-code.spec.ts).
const internal = {
  group: ['@zmodu/core', '@zmodu/core/*', '@zmodu/*/internal'],
  message: 'internal to the @zmodu packages: use the entry point (@zmodu/<name>); ZmoduError is exported by every package',
};
const above = (names, lib) => ({
  group: names.flatMap((n) => [`@zmodu/${n}`, `@zmodu/${n}/*`]),
  message: `${lib} may not import ${names.join(', ')}: it does not declare them in its package.json (docs/architecture.md, the library map)`,
});
// Specs and their fixtures may use any library (and its testing entry), but never test/ or apps/.
const SPECS = ['libs/**/*.spec.ts', 'libs/**/*.db-spec.ts', 'libs/**/__fixtures__/**/*.ts'];
const lib = ({ short: name, deps }) => {
  const forbidden = LIBRARIES.map((l) => l.short).filter((n) => n !== name && !deps.includes(n));
  return {
    files: [`libs/${name}/**/*.ts`],
    ignores: SPECS,
    rules: restrict([fromApps, fromTest, deep, ...(forbidden.length ? [above(forbidden, name)] : [])]),
  };
};

export default tseslint.config(
  // examples/ and test/fixtures/apps are applications as `nest new` makes them, with their own lint setup (npm run test:packages).
  {
    ignores: [
      'dist/**',
      '**/dist/**',
      'node_modules/**',
      'scratch/**',
      'coverage/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      'test/fixtures/apps/**',
      'examples/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Prettier wraps code at 140 columns; comments are wrapped by hand (long strings may stay on one line).
      'max-len': ['error', { code: 140, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  ...LIBRARIES.map(lib),
  { files: SPECS, rules: restrict([fromApps, fromTest, deep]) },
  // The MCP SDKs are optional peer dependencies, loaded at run time (mcp-sdk.ts) only when MCP is configured: the
  // libraries import their types only, so that importing @zmodu/mcp or @zmodu/agent never requires them.
  {
    files: ['libs/mcp/src/**/*.ts', 'libs/agent/src/**/*.ts'],
    ignores: SPECS,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@modelcontextprotocol/*'],
              allowTypeImports: true,
              message: 'the MCP SDK is an optional peer: import its types only, and load it through mcp-sdk.ts',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['apps/**/*.ts'],
    rules: restrict([deep, { group: ['**/libs/**'], message: 'the app imports libraries through @zmodu/<name>' }]),
  },
  {
    files: ['apps/sample/**/*.ts'],
    rules: restrict([deep, internal, { group: ['**/libs/**'], message: 'the app imports libraries through @zmodu/<name>' }]),
  },
  // Formatting is Prettier's (npm run lint:format); no ESLint rule argues with it.
  prettier,
);
