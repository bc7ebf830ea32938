/**
 * `npm run lint:typed`: the type-aware rules, kept apart from eslint.config.js because they need the type
 * checker (typescript-eslint's project service builds every project of tsconfig.json first): the layer and size
 * rules lint the whole tree in seconds, these take minutes, so `npm test` runs them as their own check beside
 * the others (ops/test/run-tests.sh).
 *
 * no-floating-promises: a promise nobody awaits, returns or hands to `.catch` loses its rejection — an
 * unhandled rejection stops the process, or a failed write is never noticed. Where a promise is left running
 * on purpose, `void` says so (and something else must report its failure). Production folders only: a test's
 * forgotten await fails that test.
 */
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export const TYPED_TARGETS = ['{src,signer,base,policy,ops}/**/*.{ts,mts,cts}'];

export default tseslint.config(
  { ignores: ['node_modules/**', '.build/**', 'dist/**', '.treasury/**', 'packages/*/dist/**', '**/*.d.ts'] },
  {
    files: TYPED_TARGETS,
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    // import-x: known here only because files carry directives for its rules (eslint.config.js enables them).
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    // Off: files carry directives for rules of the other configuration.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
);
