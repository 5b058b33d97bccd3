// ESLint for the TypeScript sources, tests, bench and scripts; formatting is prettier's (npm run lint).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'packages/*/dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    rules: {
      // Control characters are what several patterns look for: escape sequences from the service.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // No line over 120 characters, strings, comments and URLs included: split them.
    files: ['src/**/*.ts', 'bench/**/*.js', 'eslint.config.js'],
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': [
        'error',
        { code: 120, ignoreUrls: false, ignoreStrings: false, ignoreTemplateLiterals: false, ignoreComments: false },
      ],
    },
  },
  {
    // A function a reader holds in mind at once: at most 80 lines of code.
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The service's answers are checked with schemas built once: zod compiles an object schema's checks
    // on its first parse, so one built inside a function is compiled again on every answer.
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: ':function CallExpression[callee.object.name="z"]',
          message: 'Build a zod schema once, at module level, not on every call.',
        },
      ],
    },
  },
  {
    // Tests read back JSON a run wrote, whose shape is the assertion itself.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
