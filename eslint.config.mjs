import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read arbitrary JSON answers; typing every body would only add casts.
    files: ['tests/**', 'e2e/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  globalIgnores(['.next/**', '.next-*/**', '.tuneboard/**', 'out/**', 'build/**', 'next-env.d.ts', '.data/**', 'lib/db/migrations/**', 'test-results/**', 'playwright-report/**']),
]);
