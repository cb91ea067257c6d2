// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const nodeBuiltins = [
  'fs',
  'fs/promises',
  'path',
  'os',
  'child_process',
  'net',
  'http',
  'https',
  'crypto',
  'stream',
  'util',
  'events',
  'dns',
  'tls',
  'zlib',
  'worker_threads',
  'process',
  'timers',
  'url',
  'readline',
];

/**
 * The imports workflow code may make: src/core and @temporalio/workflow, activities (and any
 * package) as types only. `patched`/`deprecatePatch` only in src/workflows/patch.ts, whose
 * `patchedSince` takes only the dated ids of src/core/patches.ts (docs/ARCHITECTURE.md, "Patches").
 */
const workflowImports = (allowPatched) => [
  'error',
  {
    paths: [
      ...nodeBuiltins.flatMap((n) => [
        { name: n, message: 'workflow code is deterministic: no Node built-ins' },
        { name: `node:${n}`, message: 'workflow code is deterministic: no Node built-ins' },
      ]),
      ...(allowPatched
        ? []
        : [
            {
              name: '@temporalio/workflow',
              importNames: ['patched', 'deprecatePatch'],
              message: 'patches go through patchedSince (src/workflows/patch.ts), with a dated id of src/core/patches.ts',
            },
          ]),
    ],
    patterns: [
      {
        regex: '^(?!\\.{1,2}/|@temporalio/workflow$)',
        allowTypeImports: true,
        message: 'workflows import only src/core and @temporalio/workflow (other packages as types only)',
      },
      { regex: '^\\.\\./(?!core(/|$)|activities(/|$))', message: 'workflows import only src/core (and activities as types)' },
      { regex: '^\\.\\./activities(/|$)', allowTypeImports: true, message: 'workflows import activities as types only' },
    ],
  },
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
    // No value-import cycles in src/. import-x's no-cycle skips type-only imports; scripts/check-cycles.ts
    // (run by `npm run lint`) fails on those too, in src/, bench/, scripts/ and test/.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The layers (docs/ARCHITECTURE.md): core imports nothing of gpuprov outside core.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './src/core', from: './src', except: ['./core'], message: 'src/core is the ground floor: it imports only src/core' },
            { target: './src/!(client|server)/**/*', from: './src/client', message: 'only src/server and the CLI itself import src/client' },
          ],
        },
      ],
    },
  },
  {
    // One SSH module: only src/ssh talks to ssh2 (core and workflows have stricter rules below).
    files: ['src/**/*.ts'],
    ignores: ['src/ssh/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'ssh2', message: 'only src/ssh imports ssh2: use the session, identity or server from src/ssh' }] }],
    },
  },
  {
    // The workflow-safe ring: pure, deterministic, no I/O. Temporal only for message
    // definitions (api.ts, fleet-api.ts, watcher-api.ts, ledger-api.ts) and search attribute keys; elsewhere as types.
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/api.ts', 'src/core/fleet-api.ts', 'src/core/watcher-api.ts', 'src/core/ledger-api.ts', 'src/core/search-attributes.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.flatMap((n) => [
            { name: n, message: 'src/core is pure: no Node built-ins' },
            { name: `node:${n}`, message: 'src/core is pure: no Node built-ins' },
          ]),
          patterns: [{ regex: '^(?!\\.{1,2}/)', allowTypeImports: true, message: 'src/core imports no package (types excepted)' }],
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: it imports src/core and
    // @temporalio/workflow only; activities (and any package) as types only.
    files: ['src/workflows/**/*.ts'],
    ignores: ['src/workflows/patch.ts'],
    rules: { 'no-restricted-imports': workflowImports(false) },
  },
  {
    // The one door to `patched()`.
    files: ['src/workflows/patch.ts'],
    rules: { 'no-restricted-imports': workflowImports(true) },
  },
);
