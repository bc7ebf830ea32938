/**
 * The forwarded test Treasury of the enclosing mocha suite, for the CLI suites: startForwardedTreasury
 * (test/integration/cli/xx-process.ts) in a `before` hook registered here, and in an `after` hook the
 * forwarder closed and then the Treasury stopped. The handles read through to what the hook started
 * (./late-bound.ts), so a suite names them with a `const`.
 * What it defends: a suite that forgets to close one of the two, or reads them before they are there (the
 * handle throws, naming it).
 * What it does not: anything per test; the suite shares one Treasury across its tests.
 */
import type { TestTreasury } from './api-harness.js';
import { lateBound } from './late-bound.js';
import { startForwardedTreasury, type Forwarder } from '../integration/cli/xx-process.js';

export function useForwardedTreasury(extraEnv: Record<string, string> = {}): { t: TestTreasury; forwarder: Forwarder } {
  let started: { forwarder: Forwarder; t: TestTreasury } | undefined;
  before(async () => {
    started = await startForwardedTreasury(extraEnv);
  });
  after(async () => {
    await started?.forwarder.close();
    await started?.t.stop();
  });
  return {
    t: lateBound(() => started?.t, 'the forwarded test treasury'),
    forwarder: lateBound(() => started?.forwarder, 'the forwarder to the test treasury'),
  };
}
