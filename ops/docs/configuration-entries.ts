/**
 * What each environment variable means, for the generated reference docs/configuration.md
 * (./configuration-reference.ts), one file per process under ./entries/. The API's, the signer's and the
 * gate's variables, their defaults and their order come from their zod schemas; those files give each its
 * one-line meaning. The CLI, the seller middleware, the sandbox and the test harness read their few variables
 * directly: they are listed there whole.
 * A variable missing there renders as `(undocumented)`, which test/unit/ops/configuration-reference.test.ts
 * refuses, as it refuses any variable read in code that the reference does not name.
 */
export type { Entry, Entries } from './entries/entry.js';
export { API_ENTRIES } from './entries/api-entries.js';
export { REFUSED_ENTRIES, SIGNER_ENTRIES, SIGNER_HEALTH_ENTRIES } from './entries/signer-entries.js';
export { CLI_ENTRIES } from './entries/cli-entries.js';
export { GATE_ENTRIES } from './entries/gate-entries.js';
export { KOA_ENTRIES } from './entries/koa-entries.js';
export { OUTBOUND_ENTRIES } from './entries/outbound-entries.js';
export { SANDBOX_ENTRIES } from './entries/sandbox-entries.js';
export { PRODUCTION_ENTRIES } from './entries/production-entries.js';
export { TEST_ENTRIES } from './entries/test-entries.js';
export { PACKAGING_ENTRIES } from './entries/packaging-entries.js';
