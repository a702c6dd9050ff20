import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';
import tuneboard from './eslint-rules/layers.mjs';

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Layers (docs/architecture.md): which folder may import which. eslint-rules/layers.mjs explains each rule.
    plugins: { tuneboard },
    rules: {
      'tuneboard/layers': 'error',
      // One logger (lib/logger): levelled JSON lines with request ids, not console output.
      'no-console': 'error',
      // One configuration (lib/config): every variable parsed and checked once.
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through lib/config (config.*), not process.env.',
        },
      ],
    },
  },
  {
    // Command-line programs and tests print to the terminal and read their own environment.
    files: [
      'scripts/**',
      'bench/**',
      'deploy/**',
      'examples/**',
      'tests/**',
      'e2e/**',
      '**/*.test.ts',
      'lib/engine/wasm/build-kernels.ts',
    ],
    rules: { 'no-console': 'off', 'no-restricted-properties': 'off' },
  },
  {
    // The logger and the configuration are where console and process.env are meant to be used; the root
    // files are Next.js/Playwright/drizzle-kit configuration, read before lib/config exists for them.
    files: ['lib/logger/**', 'lib/config/**', '*.ts', '*.mjs', '*.mts'],
    rules: { 'no-console': 'off', 'no-restricted-properties': 'off' },
  },
  {
    // Tests read arbitrary JSON answers; typing every body would only add casts.
    files: ['tests/**', 'e2e/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // ESLint does not read .gitignore: everything git ignores and that can hold JavaScript is listed here (the
  // Python worker's virtualenv ships torch's own .js files).
  globalIgnores([
    '.venv*/**',
    'workers/python/build/**',
    '.next/**',
    '.next-*/**',
    '.tuneboard/**',
    'out/**',
    'build/**',
    'next-env.d.ts',
    '.data/**',
    'lib/db/migrations/**',
    'test-results/**',
    'playwright-report/**',
  ]),
]);
