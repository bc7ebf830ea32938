/** The test harness's variables (test/support/): listed here whole, for docs/configuration.md. */
import type { Entries } from './entry.js';

export const TEST_ENTRIES: Entries = {
  TEST_DATABASE_URL: {
    meaning:
      'a PostgreSQL server whose user may `CREATE DATABASE`; the migrated template is kept there and cloned per suite',
    default: 'embedded',
  },
  MOCHA_WORKER_ID: { meaning: "tests: set by mocha in a parallel run's worker processes (one per worker)" },
  TREASURY_TEST_CHROMIUM: {
    meaning: "tests: the Chromium the dashboard's browser tests drive (playwright-core)",
    default: '`/usr/bin/chromium`',
  },
  TREASURY_TEST_KEY_BACKEND: {
    meaning: "test signers' key backend: `pkcs11` or `aws-kms` (the KMS emulator)",
    default: '`pkcs11`',
  },
  TREASURY_TEST_PAY_FAULT: {
    meaning: 'with test/support/pay-fault-preload.ts: where a spawned API kills itself mid-pay',
  },
  TREASURY_TEST_CHAIN_LOG_LEVEL: { meaning: "the test chain's log level", default: '`silent`' },
  TREASURY_TEST_FILE_TIMES: {
    meaning: 'tests: a file the run writes how long each test file took into, slowest first (docs/testing.md)',
  },
  TREASURY_QUALIFY_MODULE: {
    meaning:
      '`npm run hsm:qualify` (ops/hsm/qualify.ts) to its KeyBackend contract run: the PKCS#11 library under qualification (set by the tool from `--module`)',
  },
  TREASURY_QUALIFY_TOKEN_LABEL: { meaning: '`npm run hsm:qualify` to its contract run: the token label' },
  TREASURY_QUALIFY_PIN_FILE: {
    meaning: "`npm run hsm:qualify` to its contract run: the PIN file's path (never the PIN)",
  },
  TREASURY_QUALIFY_KEK_LABEL: { meaning: "`npm run hsm:qualify` to its contract run: the run's root KEK label" },
};
