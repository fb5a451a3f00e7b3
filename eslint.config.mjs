import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/apps/**'], message: 'libraries never import from apps/' }] }],
    },
  },
  {
    files: ['libs/guard/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@zmodu/*', '**/apps/**'], message: 'guard imports nothing of ours (DESIGN.md §2)' }] }] },
  },
  {
    files: ['libs/skills/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@zmodu/agent', '@zmodu/agent/*', '@zmodu/admin', '@zmodu/pipeline', '@zmodu/memory', '**/apps/**'], message: 'skills may import only @zmodu/guard (DESIGN.md §2)' }] }] },
  },
);
