import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const DASHBOARD_ASSETS = 'src/server/admin/assets/*.js';
/** What the dashboard's scripts use of the browser (and the one global they share). */
const BROWSER_GLOBALS = [
  'AbortController',
  'TextDecoder',
  'TextDecoderStream',
  'URLSearchParams',
  'clearTimeout',
  'confirm',
  'console',
  'document',
  'fetch',
  'location',
  'sessionStorage',
  'setInterval',
  'setTimeout',
  'window',
];

export default tseslint.config(
  // .hosts/: the real hosts the tests install (their packages, Copilot's unpacked cache).
  { ignores: ['dist/', '.build/', 'node_modules/', '.conformance/', '.hosts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ignores: [DASHBOARD_ASSETS],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The dashboard's files as the browser runs them: classic scripts, no modules, no Node.
    files: [DASHBOARD_ASSETS],
    languageOptions: {
      ecmaVersion: 2020,
      sourceType: 'script',
      globals: Object.fromEntries(BROWSER_GLOBALS.map((name) => [name, 'readonly'])),
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }],
    },
  },
);
