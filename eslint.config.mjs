// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'fs', 'fs/promises', 'path', 'os', 'child_process', 'net', 'http', 'https', 'crypto', 'stream',
  'util', 'events', 'dns', 'tls', 'zlib', 'worker_threads', 'process', 'timers', 'url', 'readline',
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'test-artifacts/**', 'bin/**', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no providers,
    // no zod, and activities only as types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.flatMap((n) => [{ name: n, message: 'workflow code is deterministic: no Node built-ins' },
            { name: `node:${n}`, message: 'workflow code is deterministic: no Node built-ins' }]),
          { name: 'zod', message: 'zod belongs at the edges, not in workflows' },
          { name: 'undici', message: 'no I/O in workflows' },
          { name: 'ssh2', message: 'no I/O in workflows' },
        ],
        patterns: [
          { group: ['**/providers/*/**', '**/providers/registry*', '**/providers/local*'], message: 'workflows may import only provider types (providers/types)' },
          { group: ['**/activities/**', '**/activities'], allowTypeImports: true, message: 'workflows import activities as types only' },
          { group: ['**/providers/**'], allowTypeImports: true, message: 'workflows import providers as types only' },
        ],
      }],
    },
  },
);
