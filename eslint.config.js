import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'test-output/**', 'coverage/**', 'dist/**', 'web/bundle/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only src/config.ts and entry points read the environment.' }],
    },
  },
  {
    files: ['src/config.ts', 'src/server.ts', 'src/localnet/main.ts', 'bench/**', 'scripts/**', 'test/**', 'src/client/cli.ts', 'src/client/cli.js', 'bin/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
