import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// The direction of imports (DESIGN.md §2): guard <- skills <- pipeline <- agent <- admin; the app
// only through the @zmodu/<name> entry points; libraries never from apps/.
const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const fromApps = { group: ['**/apps/**'], message: 'libraries never import from apps/' };
const deep = { group: ['@zmodu/*/*'], message: 'import a library only through its entry point @zmodu/<name>' };
const above = (names, lib) => ({
  group: names.flatMap((n) => [`@zmodu/${n}`, `@zmodu/${n}/*`]),
  message: `${lib} may not import ${names.join(', ')} (DESIGN.md §2)`,
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'scratch/**', 'coverage/**', '.data/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  { files: ['libs/db/**/*.ts'], rules: restrict([fromApps, above(['guard', 'skills', 'memory', 'pipeline', 'agent', 'admin'], 'db')]) },
  {
    files: ['libs/guard/**/*.ts'],
    ignores: ['**/*.db-spec.ts'],
    rules: restrict([fromApps, above(['db', 'skills', 'memory', 'pipeline', 'agent', 'admin'], 'guard')]),
  },
  {
    files: ['libs/skills/**/*.ts'],
    ignores: ['**/*.db-spec.ts'],
    rules: restrict([fromApps, deep, above(['memory', 'pipeline', 'agent', 'admin'], 'skills')]),
  },
  { files: ['libs/memory/**/*.ts'], rules: restrict([fromApps, deep, above(['guard', 'skills', 'pipeline', 'agent', 'admin'], 'memory')]) },
  {
    files: ['libs/pipeline/**/*.ts'],
    ignores: ['**/*.db-spec.ts'],
    rules: restrict([fromApps, deep, above(['memory', 'agent', 'admin'], 'pipeline')]),
  },
  { files: ['libs/agent/**/*.ts'], rules: restrict([fromApps, deep, above(['admin'], 'agent')]) },
  { files: ['libs/admin/**/*.ts'], rules: restrict([fromApps, deep]) },
  {
    files: ['apps/**/*.ts'],
    rules: restrict([deep, { group: ['**/libs/**'], message: 'the app imports libraries through @zmodu/<name>' }]),
  },
  // Formatting is Prettier's (npm run lint:format); no ESLint rule argues with it.
  prettier,
);
