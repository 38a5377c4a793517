import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'test-output/**', 'coverage/**', 'packages/*/dist/**', 'packages/web/bundle/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only config.ts and entry points read the environment.' }],
      // The packages meet only at their public entries: `@cinder/<name>`, never a relative path
      // into another package's files.
      'import-x/no-relative-packages': 'error',
    },
  },
  {
    files: [
      'packages/service/src/config.ts',
      'packages/service/src/server.ts',
      'packages/localnet/src/main.ts',
      'packages/client/src/cli.ts',
      'packages/*/bin/**',
      'packages/*/bench/**',
      'packages/*/test/**',
      'packages/testkit/**',
      'scripts/**',
      'test/**',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
);
