/**
 * parse-policy.ts: the stored canonical policy into bigints, sets and a map; and the fail-closed checks on a
 * stored policy that no longer parses (unknown field, bad amount, bad address, wrong types).
 */
import assert from 'node:assert/strict';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { parsePolicy } from '../../../policy/parse-policy.js';
import { PolicyInputError } from '../../../policy/policy-errors.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import { EMPTY, NOW, OTHER, TO, caps, pay, policy } from './policy-fixtures.js';

describe('parsePolicy', () => {
  it('parses the canonical form into micro-USD, lower-case address sets and a capability map', () => {
    const parsed = parsePolicy(
      policy({
        ...caps('5.5', '50', '200', '0.000001'),
        velocity_cap: { max_count: 10, window_seconds: 60 },
        counterparty_allowlist: [TO],
        counterparty_blocklist: [OTHER],
        cooling_off: 30,
        capability_cap_usd: { 'llm.*': '2', '*': '0' },
      }),
    );
    assert.deepEqual(parsed, {
      perTxCapMicro: 5_500_000n,
      dailyCapMicro: 50_000_000n,
      weeklyCapMicro: 200_000_000n,
      monthlyCapMicro: 1n,
      velocityCap: { maxCount: 10, windowSeconds: 60 },
      counterpartyAllowlist: new Set([TO.toLowerCase()]),
      counterpartyBlocklist: new Set([OTHER.toLowerCase()]),
      coolingOffSeconds: 30,
      capabilityCaps: new Map([
        ['*', 0n],
        ['llm.*', 2_000_000n],
      ]),
    });
    assert.deepEqual(parsePolicy({}), {});
  });

  it('throws PolicyInputError, naming the field, on a stored policy that does not parse', () => {
    const cases: Array<[unknown, string]> = [
      [null, 'policy'],
      [[], 'policy'],
      ['{}', 'policy'],
      [{ future_rule: 1 }, 'policy.future_rule'],
      [{ daily_cap_usd: 10 }, 'policy.daily_cap_usd'],
      [{ daily_cap_usd: '1e3' }, 'policy.daily_cap_usd'],
      [{ per_tx_cap_usd: '-1' }, 'policy.per_tx_cap_usd'],
      [{ velocity_cap: { max_count: 0, window_seconds: 1 } }, 'policy.velocity_cap.max_count'],
      [{ velocity_cap: { max_count: 1 } }, 'policy.velocity_cap.window_seconds'],
      [{ velocity_cap: { max_count: 1, window_seconds: 1, burst: 2 } }, 'policy.velocity_cap'],
      [{ counterparty_allowlist: TO }, 'policy.counterparty_allowlist'],
      [{ counterparty_blocklist: ['0x123'] }, 'policy.counterparty_blocklist[0]'],
      [{ cooling_off: '30' }, 'policy.cooling_off'],
      [{ cooling_off: Number.NaN }, 'policy.cooling_off'],
      [{ capability_cap_usd: [] }, 'policy.capability_cap_usd'],
      [{ capability_cap_usd: { UPPER: '1' } }, 'policy.capability_cap_usd'],
      [{ capability_cap_usd: { a: 1 } }, 'policy.capability_cap_usd["a"]'],
    ];
    for (const [stored, field] of cases) {
      assert.throws(
        () => parsePolicy(stored),
        (err: unknown) => err instanceof PolicyInputError && err.field === field,
        JSON.stringify(stored),
      );
      assert.throws(() => evaluatePolicy(stored as WalletPolicy, pay('1'), EMPTY, NOW), PolicyInputError);
    }
  });

  it('accepts a stored policy written before canonical spelling (e.g. "1.50", lower-case addresses)', () => {
    const d = evaluatePolicy(
      { per_tx_cap_usd: '1.50', counterparty_allowlist: [TO.toLowerCase() as `0x${string}`] },
      pay('1.5'),
      EMPTY,
      NOW,
    );
    assert.equal(d.allowed, true);
  });
});
