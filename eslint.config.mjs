// ESLint (flat config): the recommended JavaScript and typescript-eslint rules over the whole tree.
// Run by `npm test` (`npm run lint`); formatting is Prettier's (`npm run format`), not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/generated/**',
      'cdk.out/**',
      'dist/**',
      '.local/**',
      'test/architecture-fixtures/**',
      'test/lint-fixtures/**',
      'test/hl7/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // HL7 and JSON validation match control characters on purpose (escaping, refusing them)
      'no-control-regex': 'off',
      // TypeScript checks names (tsc runs first in npm test); the rule does not know Node's globals in .ts
      'no-undef': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
