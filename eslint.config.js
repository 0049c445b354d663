import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'docs/api/**', 'node_modules/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
      // A rejection the SDK makes is an Error. Passing on a reason it was handed (a caller's
      // abort reason, a store's or a framework's failure, typed any or unknown) is allowed:
      // wrapping it would change what the merchant's catch sees.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // ky runs the client's calls, but whether an attempt is sent again is retry-policy.ts's to say,
    // through shouldRetry alone: a forced retry (ky.retry()) skips shouldRetry, and ky.stop ends
    // retrying without the call's error being decided (issue 21).
    files: ['src/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'ky',
          property: 'retry',
          message: 'Retries are decided by retry-policy.ts through shouldRetry; ky.retry() would skip it.',
        },
        {
          object: 'ky',
          property: 'stop',
          message: 'A call ends with the error retry-policy.ts decided; ky.stop would end it without one.',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          // The same on the transport's instance (this.#ky.retry(), this.#ky.stop).
          selector: "MemberExpression[property.name=/^(retry|stop)$/][object.property.name='ky']",
          message: 'Retries are decided by retry-policy.ts through shouldRetry: no ky.retry() or ky.stop.',
        },
      ],
    },
  },
  {
    files: ['examples/**', 'bench/**', 'test/**'],
    rules: {
      'no-console': 'off',
      // Tests, benchmarks and examples read JSON bodies, Redis replies and mock payloads that are
      // `any` by nature and then assert on them; the no-unsafe-* family would flag every such
      // read without catching a bug. The promise and assertion rules stay on here.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Test doubles (and the examples' stand-ins) implement async interfaces (stores, fetch,
      // framework hooks) with bodies that happen not to wait; `async` keeps a throw in them a
      // rejection, as in the real thing.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // examples/tsconfig.json type-checks the examples against the built declarations
    // (.tmp/dts), which lint must not depend on: lint them with the root project, where
    // `myr-gateway` maps to src.
    files: ['examples/**'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
