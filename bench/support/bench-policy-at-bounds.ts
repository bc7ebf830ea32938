/**
 * A wallet policy at the schema's bounds (policy/policy-object-schema.ts POLICY_LIMITS): 1,000 allowed and 1,000
 * blocked counterparties and 256 capability caps, with caps no bench reaches — every bench payment (to `payTo`,
 * capability `bench`) is still allowed. `BENCH_POLICY=bounds npm run bench` gives the pay phases' wallets this
 * policy: what a payment costs when its wallet's policy is as large as a policy may be.
 *
 * Deterministic (addresses and keys derived from their index), so runs compare. Not for tests.
 */
import { createHash } from 'node:crypto';

const derived = (label: string, i: number) => createHash('sha256').update(`${label}-${i}`).digest('hex');

export function policyAtBounds(payTo: string) {
  const allow = Array.from({ length: 999 }, (_, i) => `0x${derived('bench-allow', i).slice(0, 40)}`);
  const block = Array.from({ length: 1000 }, (_, i) => `0x${derived('bench-block', i).slice(0, 40)}`);
  const caps = Object.fromEntries(
    Array.from({ length: 255 }, (_, i) => [`bench.${derived('bench-cap', i).slice(0, 12)}`, '1']),
  );
  return {
    per_tx_cap_usd: '1',
    daily_cap_usd: '1000000',
    velocity_cap: { max_count: 1000000, window_seconds: 60 },
    counterparty_allowlist: [...allow, payTo],
    counterparty_blocklist: block,
    capability_cap_usd: { ...caps, bench: '1' },
  };
}
