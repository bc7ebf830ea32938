/**
 * The state each policy rule declares (src/api/pay/rule-state.ts) is the state it reads: for every rule, a
 * policy that sets only that rule, and every piece of wallet state pushed to an extreme one at a time — an
 * undeclared piece never changes the rule's verdict, and each declared piece does. And a remembered snapshot
 * moves every declared piece when a payment is written on top of it.
 */
import assert from 'node:assert/strict';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import { RULE_NAMES, type RuleName, type SpendRequest, type SpendState } from '../../../policy/policy-types.js';
import { DECLARED_STATE, RULE_STATE, stateAfterPayment, type StateKey } from '../../../src/api/pay/rule-state.js';
import { EMPTY, NOW, OTHER, pay, policy, transfer } from '../policy/policy-fixtures.js';

/** Per rule: a policy that sets only it, and a request the rule judges (allowed on an empty state). */
const ONLY: Record<RuleName, { policy: WalletPolicy; request: SpendRequest }> = {
  per_tx_cap_usd: { policy: policy({ per_tx_cap_usd: '5' }), request: pay('4') },
  daily_cap_usd: { policy: policy({ daily_cap_usd: '5' }), request: pay('4') },
  weekly_cap_usd: { policy: policy({ weekly_cap_usd: '5' }), request: pay('4') },
  monthly_cap_usd: { policy: policy({ monthly_cap_usd: '5' }), request: pay('4') },
  velocity_cap: { policy: policy({ velocity_cap: { max_count: 3, window_seconds: 60 } }), request: pay('4') },
  counterparty_allowlist: { policy: policy({ counterparty_allowlist: [OTHER] }), request: pay('4', { to: OTHER }) },
  counterparty_blocklist: { policy: policy({ counterparty_blocklist: [OTHER] }), request: pay('4') },
  cooling_off: { policy: policy({ cooling_off: 60 }), request: pay('4') },
  capability_cap_usd: {
    policy: policy({ capability_cap_usd: { 'search.web': '5' } }),
    request: pay('4', { capability: 'search.web' }),
  },
  transfer_not_permitted_with_capability_cap: {
    policy: policy({ capability_cap_usd: { 'search.web': '5' } }),
    request: transfer('4'),
  },
};

/** Each piece of state at an extreme that any rule reading it would refuse. */
const EXTREME: { [K in StateKey]: SpendState[K] } = {
  dailySpentMicro: 10n ** 12n,
  weeklySpentMicro: 10n ** 12n,
  monthlySpentMicro: 10n ** 12n,
  lastPaymentAt: new Date(NOW.getTime() - 1000),
  recentCount: 1000,
};
const KEYS = Object.keys(EXTREME) as StateKey[];

const violates = (rule: RuleName, state: SpendState) =>
  evaluatePolicy(ONLY[rule].policy, ONLY[rule].request, state, NOW).violations.some((v) => v.rule === rule);

describe('pay wing: the state each policy rule declares', () => {
  for (const rule of RULE_NAMES) {
    const declared: readonly StateKey[] = RULE_STATE[rule];
    it(`${rule} reads ${declared.length ? declared.join(', ') : 'no wallet state'}, and nothing else`, () => {
      const loaded = { ...EMPTY, ...EXTREME };
      for (const key of KEYS) {
        const changes =
          violates(rule, { ...EMPTY, [key]: EXTREME[key] }) !== violates(rule, EMPTY) ||
          violates(rule, { ...loaded, [key]: EMPTY[key] }) !== violates(rule, loaded);
        assert.equal(changes, declared.includes(key), `${rule} and ${key}`);
      }
    });
  }

  it('a payment written on top of a snapshot moves every declared piece of state', () => {
    const before: SpendState = {
      dailySpentMicro: 1n,
      weeklySpentMicro: 2n,
      monthlySpentMicro: 3n,
      lastPaymentAt: new Date(0),
      recentCount: 4,
    };
    const after = stateAfterPayment(before, { amountMicro: 10n, at: NOW });
    assert.deepEqual(after, {
      dailySpentMicro: 11n,
      weeklySpentMicro: 12n,
      monthlySpentMicro: 13n,
      lastPaymentAt: NOW,
      recentCount: 5,
    });
    assert.deepEqual([...DECLARED_STATE].sort(), [...KEYS].sort());
  });
});
