import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';

// Architecture boundaries (docs/architecture.md): modules meet only through each other's `index.ts`,
// and infra imports no module. Relative specifiers are matched per folder depth, because a pattern must
// know how many `../` reach src/modules from the importing file and which module is its own.
const moduleNames = readdirSync(new URL('./src/modules', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

function moduleBoundaries(name) {
  return [1, 2, 3].map((depth) => ({
    files: [`src/modules/${name}/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^${'\\.\\./'.repeat(depth)}(?!\\.\\.?/|${name}/)[^/]+/(?!index\\.js$)`,
              message: 'Import another module only through its index.ts (e.g. ../projects/index.js).',
            },
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-bench/**',
      '.test-build/**',
      'node_modules/**',
      'data/**',
      'bench/results/**',
      'scripts/*.mjs',
      'test/**/*.mjs',
      'test/contract/generated/**',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
      '@typescript-eslint/only-throw-error': 'off',
    },
  },
  ...moduleNames.flatMap(moduleBoundaries),
  {
    files: ['src/infra/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)modules(/|$)', message: 'src/infra imports no module (modules depend on infra).' }] },
      ],
    },
  },
  {
    // Plain CommonJS run as worker threads (checkpointer.worker.cjs, smtp.worker.cjs): no types to check.
    files: ['src/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { require: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The pages' one script (src/web/basalt.js): plain browser ES served as is, no types to check.
    files: ['src/web/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly' },
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
