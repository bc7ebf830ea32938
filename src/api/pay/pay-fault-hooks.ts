/**
 * Test seam for the crash-safety tests: hooks the pay path calls at its three crash points (after a
 * reservation committed unsigned, after a signature came back for a payment not yet written, after a
 * pay's signature was recorded and before the response). Nothing in production installs any: no
 * configuration or environment variable reaches this module. The installers are the test preload
 * test/support/pay-fault-preload.ts, which a test passes to a spawned API with `node --import` (it runs
 * before src/api/main.ts and calls `installPayFaultHooks`), and tests that build an app in their own process
 * with hooks installed only while they build it. app.ts hands `installedPayFaultHooks()` to the
 * pay service (empty, so inert, unless a preload installed some). The hooks are kept under one symbol of the
 * process's global registry rather than in this module's own state: the preload runs from the sources and
 * the API may run as a bundle holding its own copy of this module (ops/build/bundle-entries.ts), and both
 * must see the same hooks.
 *
 * Defends against: a production process that can be told by its configuration to kill itself mid-payment.
 * Does not defend: code loaded into the process can install hooks — as it could do anything else there.
 */

export interface PayFaultHooks {
  /** A reservation committed unsigned, before the signer is asked (the locked and the alone paths). */
  afterReserve?: () => void;
  /** A signature came back for a payment not yet written (the group-committed path). */
  afterSign?: () => void;
  /** A pay's signature is recorded; the response is not sent yet. */
  afterCommit?: () => void;
}

const SLOT = Symbol.for('treasury.test.payFaultHooks');
type HookSlot = { [SLOT]?: Readonly<PayFaultHooks> };

/** For test preloads only (see the header). */
export function installPayFaultHooks(hooks: PayFaultHooks): void {
  (globalThis as HookSlot)[SLOT] = Object.freeze({ ...hooks });
}

/** The hooks installed by a test preload; `{}` in production. */
export function installedPayFaultHooks(): Readonly<PayFaultHooks> {
  return (globalThis as HookSlot)[SLOT] ?? Object.freeze({});
}
