/**
 * The pure policy engine: each rule's allow and deny sides at their exact boundaries (at the cap allowed, one
 * micro-USD over denied), every violation reported together, headroom semantics, the capability rules (a pay
 * naming none: ./capability-required.test.ts), input checks, and seeded properties of the window caps.
 */
import assert from 'node:assert/strict';
import { evaluateParsedPolicy, evaluatePolicy, policyViolations } from '../../../policy/evaluate-policy.js';
import { formatUsd, parseUsd } from '../../../policy/money.js';
import { parsePolicy } from '../../../policy/parse-policy.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import { PolicyInputError } from '../../../policy/policy-errors.js';
import { RULE_NAMES, type SpendState } from '../../../policy/policy-types.js';
import { matchCapabilityCap } from '../../../policy/rules/capability-cap.js';
import { EMPTY, NOW, OTHER, THIRD, TO, caps, pay, policy, rules, seeded, transfer, upper } from './policy-fixtures.js';

const secondsAgo = (s: number): SpendState => ({ ...EMPTY, lastPaymentAt: new Date(NOW.getTime() - s * 1000) });

describe('evaluatePolicy: an empty policy', () => {
  it('allows any pay or transfer, with no headroom fields', () => {
    assert.deepEqual(evaluatePolicy({}, pay('1000'), EMPTY, NOW), { allowed: true, violations: [], headroom: {} });
    assert.deepEqual(evaluatePolicy({}, transfer('1000'), EMPTY, NOW), { allowed: true, violations: [], headroom: {} });
  });
});

describe('rule per_tx_cap_usd', () => {
  const p = policy({ per_tx_cap_usd: '5' });
  it('allows exactly the cap and refuses one micro-USD more, naming limit and attempted amount', () => {
    assert.equal(evaluatePolicy(p, pay('5'), EMPTY, NOW).allowed, true);
    const d = evaluatePolicy(p, pay('5.000001'), EMPTY, NOW);
    assert.deepEqual(rules(d), ['per_tx_cap_usd']);
    assert.equal(d.violations[0]!.limit, '5');
    assert.equal(d.violations[0]!.attempted, '5.000001');
  });
  it('applies to transfers too', () => {
    assert.deepEqual(rules(evaluatePolicy(p, transfer('6'), EMPTY, NOW)), ['per_tx_cap_usd']);
  });
  it('reports the cap itself as headroom (it does not deplete)', () => {
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).headroom.per_tx_usd, '5');
  });
});

for (const [rule, field, headroom] of [
  ['daily_cap_usd', 'dailySpentMicro', 'daily_usd'],
  ['weekly_cap_usd', 'weeklySpentMicro', 'weekly_usd'],
  ['monthly_cap_usd', 'monthlySpentMicro', 'monthly_usd'],
] as const) {
  describe(`rule ${rule}`, () => {
    const p = policy({ [rule]: '10' });
    const state = { ...EMPTY, [field]: parseUsd('7') };
    it('allows spent + amount exactly at the cap; headroom after the payment is 0', () => {
      const ok = evaluatePolicy(p, pay('3'), state, NOW);
      assert.equal(ok.allowed, true);
      assert.equal(ok.headroom[headroom], '0');
    });
    it('refuses one micro-USD over; headroom is what remains before it', () => {
      const no = evaluatePolicy(p, pay('3.000001'), state, NOW);
      assert.deepEqual(rules(no), [rule]);
      assert.equal(no.headroom[headroom], '3');
      assert.deepEqual(
        { limit: no.violations[0]!.limit, attempted: no.violations[0]!.attempted, spent: no.violations[0]!.spent },
        { limit: '10', attempted: '3.000001', spent: '7' },
      );
    });
    it('reports headroom 0 (never negative) when the window is already over its cap', () => {
      const over = evaluatePolicy(p, pay('1'), { ...EMPTY, [field]: parseUsd('12') }, NOW);
      assert.deepEqual(rules(over), [rule]);
      assert.equal(over.headroom[headroom], '0');
    });
    it('applies to transfers too', () => {
      assert.deepEqual(rules(evaluatePolicy(p, transfer('3.01'), state, NOW)), [rule]);
    });
  });
}

describe('window caps: seeded property', () => {
  it('denies exactly when spent + amount > cap, and headroom is cap − spent (− amount when allowed)', () => {
    const rng = seeded(86_400n);
    for (let i = 0; i < 1_000; i++) {
      const cap = 1n + rng.below(10n ** 9n);
      const spent = rng.below(cap + 10n);
      const amount = 1n + rng.below(cap);
      const p = policy({ daily_cap_usd: formatUsd(cap) });
      const d = evaluatePolicy(
        p,
        { kind: 'pay', amountMicro: amount, to: TO },
        { ...EMPTY, dailySpentMicro: spent },
        NOW,
      );
      assert.equal(d.allowed, spent + amount <= cap);
      const left = cap - spent - (d.allowed ? amount : 0n);
      assert.equal(d.headroom.daily_usd, formatUsd(left > 0n ? left : 0n));
    }
  });
});

describe('rule velocity_cap', () => {
  const p = policy({ velocity_cap: { max_count: 3, window_seconds: 60 } });
  it('allows the max_count-th payment in the window and refuses the next', () => {
    const ok = evaluatePolicy(p, pay('1'), { ...EMPTY, recentCount: 2 }, NOW);
    assert.equal(ok.allowed, true);
    assert.equal(ok.headroom.velocity_remaining, 0);
    const no = evaluatePolicy(p, pay('1'), { ...EMPTY, recentCount: 3 }, NOW);
    assert.deepEqual(rules(no), ['velocity_cap']);
    assert.equal(no.headroom.velocity_remaining, 0);
    assert.deepEqual(
      { limit: no.violations[0]!.limit, recent: no.violations[0]!.recent_count },
      { limit: '3', recent: 3 },
    );
  });
  it('reports remaining payments after this one when allowed', () => {
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).headroom.velocity_remaining, 2);
  });
  it('max_count 1 allows a single payment per window', () => {
    const one = policy({ velocity_cap: { max_count: 1, window_seconds: 1 } });
    assert.equal(evaluatePolicy(one, pay('1'), EMPTY, NOW).allowed, true);
    assert.deepEqual(rules(evaluatePolicy(one, pay('1'), { ...EMPTY, recentCount: 1 }, NOW)), ['velocity_cap']);
  });
});

describe('rule counterparty_allowlist', () => {
  const p = policy({ counterparty_allowlist: [TO, THIRD] });
  it('allows a listed recipient in any case', () => {
    for (const to of [TO, TO.toLowerCase(), upper(TO)])
      assert.equal(evaluatePolicy(p, pay('1', { to }), EMPTY, NOW).allowed, true, to);
  });
  it('refuses an unlisted recipient and reports it checksummed', () => {
    const d = evaluatePolicy(p, pay('1', { to: OTHER.toLowerCase() }), EMPTY, NOW);
    assert.deepEqual(rules(d), ['counterparty_allowlist']);
    assert.equal(d.violations[0]!.counterparty, OTHER);
  });
  it('applies to transfers too', () => {
    assert.deepEqual(rules(evaluatePolicy(p, transfer('1', { to: OTHER }), EMPTY, NOW)), ['counterparty_allowlist']);
  });
  it('decision: an empty allowlist allows no recipient', () => {
    assert.deepEqual(rules(evaluatePolicy(policy({ counterparty_allowlist: [] }), pay('1'), EMPTY, NOW)), [
      'counterparty_allowlist',
    ]);
  });
});

describe('rule counterparty_blocklist', () => {
  const p = policy({ counterparty_blocklist: [OTHER] });
  it('allows an unlisted recipient', () => {
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).allowed, true);
    assert.equal(evaluatePolicy(policy({ counterparty_blocklist: [] }), pay('1'), EMPTY, NOW).allowed, true);
  });
  it('refuses a listed recipient in any case and reports it checksummed', () => {
    for (const to of [OTHER, OTHER.toLowerCase(), upper(OTHER)]) {
      const d = evaluatePolicy(p, transfer('1', { to }), EMPTY, NOW);
      assert.deepEqual(rules(d), ['counterparty_blocklist'], to);
      assert.equal(d.violations[0]!.counterparty, OTHER);
    }
  });
  it('wins over the allowlist for a stored policy that lists an address in both (the schema refuses that)', () => {
    const stored = { counterparty_allowlist: [OTHER], counterparty_blocklist: [OTHER] } as WalletPolicy;
    assert.deepEqual(rules(evaluatePolicy(stored, pay('1', { to: OTHER }), EMPTY, NOW)), ['counterparty_blocklist']);
  });
});

describe('rule cooling_off', () => {
  const p = policy({ cooling_off: 30 });
  it('allows the first payment ever and one exactly cooling_off seconds after the last', () => {
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).allowed, true);
    assert.equal(evaluatePolicy(p, pay('1'), secondsAgo(30), NOW).allowed, true);
  });
  it('refuses one millisecond earlier, with the wait rounded up to whole seconds', () => {
    const d = evaluatePolicy(p, pay('1'), secondsAgo(29.999), NOW);
    assert.deepEqual(rules(d), ['cooling_off']);
    assert.equal(d.violations[0]!.retry_after_seconds, 1);
    assert.equal(d.headroom.cooling_off_remaining_seconds, 1);
    assert.equal(evaluatePolicy(p, pay('1'), secondsAgo(0), NOW).violations[0]!.retry_after_seconds, 30);
  });
  it('fails closed on a last payment in the future (clock skew): the wait grows by the skew', () => {
    const d = evaluatePolicy(p, pay('1'), secondsAgo(-5), NOW);
    assert.deepEqual(rules(d), ['cooling_off']);
    assert.equal(d.violations[0]!.retry_after_seconds, 35);
  });
  it('reports the full cooling-off as headroom after an allowed payment; 0 turns the rule off', () => {
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).headroom.cooling_off_remaining_seconds, 30);
    const off = evaluatePolicy(policy({ cooling_off: 0 }), pay('1'), secondsAgo(0), NOW);
    assert.deepEqual(off, { allowed: true, violations: [], headroom: {} });
  });
});

describe('rule capability_cap_usd', () => {
  const caps = { 'llm.*': '2', 'llm.gpt.*': '1', 'llm.gpt.mini': '0.1', search: '0.5', 'blocked.*': '0' };
  const p = policy({ capability_cap_usd: caps });

  it('matches exact over prefix, then the longest prefix; `llm.*` does not match `llm`', () => {
    const m = parsePolicy(p).capabilityCaps!;
    assert.deepEqual(matchCapabilityCap(m, 'llm.gpt.mini'), { key: 'llm.gpt.mini', capMicro: 100_000n });
    assert.deepEqual(matchCapabilityCap(m, 'llm.gpt.large'), { key: 'llm.gpt.*', capMicro: 1_000_000n });
    assert.deepEqual(matchCapabilityCap(m, 'llm.claude'), { key: 'llm.*', capMicro: 2_000_000n });
    assert.deepEqual(matchCapabilityCap(m, 'search'), { key: 'search', capMicro: 500_000n });
    assert.equal(matchCapabilityCap(m, 'search.web'), undefined);
    assert.equal(matchCapabilityCap(m, 'llm'), undefined);
  });

  it('allows exactly the matched cap and refuses one micro-USD more, naming capability and matched key', () => {
    assert.equal(evaluatePolicy(p, pay('1', { capability: 'llm.gpt.large' }), EMPTY, NOW).allowed, true);
    const d = evaluatePolicy(p, pay('1.000001', { capability: 'llm.gpt.large' }), EMPTY, NOW);
    assert.deepEqual(rules(d), ['capability_cap_usd']);
    assert.deepEqual(
      { limit: d.violations[0]!.limit, capability: d.violations[0]!.capability, matched: d.violations[0]!.matched },
      { limit: '1', capability: 'llm.gpt.large', matched: 'llm.gpt.*' },
    );
    // The exact key is tighter than its prefix key.
    assert.deepEqual(rules(evaluatePolicy(p, pay('0.5', { capability: 'llm.gpt.mini' }), EMPTY, NOW)), [
      'capability_cap_usd',
    ]);
  });

  it('does not cap a capability that matches no key, unless a lone `*` key catches it', () => {
    assert.equal(evaluatePolicy(p, pay('100', { capability: 'weather' }), EMPTY, NOW).allowed, true);
    const star = policy({ capability_cap_usd: { ...caps, '*': '0.05' } });
    const d = evaluatePolicy(star, pay('0.06', { capability: 'weather' }), EMPTY, NOW);
    assert.deepEqual(rules(d), ['capability_cap_usd']);
    assert.equal(d.violations[0]!.matched, '*');
    assert.equal(evaluatePolicy(star, pay('2', { capability: 'llm.claude' }), EMPTY, NOW).allowed, true); // longer prefix wins over `*`
  });

  it('a "0" cap forbids its capabilities', () => {
    assert.deepEqual(rules(evaluatePolicy(p, pay('0.000001', { capability: 'blocked.x' }), EMPTY, NOW)), [
      'capability_cap_usd',
    ]);
  });

  it('uses own keys only: prototype names never match a cap they do not have', () => {
    for (const capability of ['constructor', 'tostring', 'hasownproperty', 'valueof']) {
      assert.equal(evaluatePolicy(p, pay('1', { capability }), EMPTY, NOW).allowed, true, capability);
    }
    const own = policy({ capability_cap_usd: { constructor: '0.5' } });
    assert.deepEqual(rules(evaluatePolicy(own, pay('1', { capability: 'constructor' }), EMPTY, NOW)), [
      'capability_cap_usd',
    ]);
  });

  it('ignores the capability on a wallet without capability caps', () => {
    assert.equal(
      evaluatePolicy(policy({ per_tx_cap_usd: '5' }), pay('1', { capability: 'anything' }), EMPTY, NOW).allowed,
      true,
    );
    assert.equal(evaluatePolicy(policy({ capability_cap_usd: {} }), transfer('1'), EMPTY, NOW).allowed, true);
  });
});

describe('rule transfer_not_permitted_with_capability_cap (fail-closed)', () => {
  it('refuses every transfer on a wallet with any capability cap, whatever the amount or capability', () => {
    const p = policy({ capability_cap_usd: { x: '100' } });
    for (const request of [transfer('0.000001'), transfer('1', { capability: 'x' })]) {
      const d = evaluatePolicy(p, request, EMPTY, NOW);
      assert.deepEqual(rules(d), ['transfer_not_permitted_with_capability_cap']);
    }
  });
  it('leaves transfers to per_tx and window caps when there is no capability cap', () => {
    assert.equal(evaluatePolicy(policy({ per_tx_cap_usd: '1' }), transfer('1'), EMPTY, NOW).allowed, true);
  });
});

describe('evaluatePolicy: all violations together', () => {
  const p = policy({
    ...caps('1', '1', '1', '1'),
    velocity_cap: { max_count: 1, window_seconds: 60 },
    counterparty_allowlist: [OTHER],
    counterparty_blocklist: [TO],
    cooling_off: 60,
    capability_cap_usd: { a: '1' },
  });
  const busy: SpendState = {
    dailySpentMicro: 0n,
    weeklySpentMicro: 0n,
    monthlySpentMicro: 0n,
    recentCount: 1,
    lastPaymentAt: NOW,
  };

  it('reports every violated rule of a pay, in RULE_NAMES order', () => {
    const d = evaluatePolicy(p, pay('2', { capability: 'a' }), busy, NOW);
    assert.equal(d.allowed, false);
    assert.deepEqual(
      rules(d),
      RULE_NAMES.filter((r) => r !== 'transfer_not_permitted_with_capability_cap'),
    );
    assert.deepEqual(d.headroom, {
      per_tx_usd: '1',
      daily_usd: '1',
      weekly_usd: '1',
      monthly_usd: '1',
      velocity_remaining: 0,
      cooling_off_remaining_seconds: 60,
    });
  });

  it('reports every violated rule of a transfer, the fail-closed one included', () => {
    const d = evaluatePolicy(p, transfer('2'), busy, NOW);
    assert.deepEqual(
      rules(d),
      RULE_NAMES.filter((r) => r !== 'capability_cap_usd'),
    );
  });

  it('reports two rules, not only the first, when two fail', () => {
    const d = evaluatePolicy(
      policy({ per_tx_cap_usd: '1', daily_cap_usd: '5' }),
      pay('1.5'),
      { ...EMPTY, dailySpentMicro: parseUsd('4') },
      NOW,
    );
    assert.deepEqual(rules(d), ['per_tx_cap_usd', 'daily_cap_usd']);
  });

  it('headroom on an allow is after the payment', () => {
    const q = policy({
      ...caps('5', '10', '20', '30'),
      velocity_cap: { max_count: 5, window_seconds: 60 },
      cooling_off: 10,
    });
    const d = evaluatePolicy(
      q,
      pay('2.5'),
      {
        dailySpentMicro: parseUsd('1'),
        weeklySpentMicro: parseUsd('2'),
        monthlySpentMicro: parseUsd('3'),
        recentCount: 1,
        lastPaymentAt: null,
      },
      NOW,
    );
    assert.deepEqual(d, {
      allowed: true,
      violations: [],
      headroom: {
        per_tx_usd: '5',
        daily_usd: '6.5',
        weekly_usd: '15.5',
        monthly_usd: '24.5',
        velocity_remaining: 3,
        cooling_off_remaining_seconds: 10,
      },
    });
  });
});

describe('evaluatePolicy: fails closed on malformed inputs (throws PolicyInputError, never allows)', () => {
  it('refuses non-positive and non-bigint amounts', () => {
    for (const amountMicro of [0n, -1n, 1 as unknown as bigint, '1' as unknown as bigint]) {
      assert.throws(
        () => evaluatePolicy({}, { kind: 'pay', amountMicro, to: TO }, EMPTY, NOW),
        PolicyInputError,
        String(amountMicro),
      );
    }
  });
  it('evaluates any positive amount, a uint256-sized raw amount included (a pay is not bounded by the USD field limit)', () => {
    const huge = 2n ** 255n;
    assert.equal(evaluatePolicy({}, { kind: 'pay', amountMicro: huge, to: TO }, EMPTY, NOW).allowed, true);
    assert.deepEqual(
      rules(
        evaluatePolicy(
          policy({ daily_cap_usd: '9223372036854.775807' }),
          { kind: 'pay', amountMicro: huge, to: TO },
          EMPTY,
          NOW,
        ),
      ),
      ['daily_cap_usd'],
    );
  });
  it('refuses a malformed recipient, kind, capability type, state or clock', () => {
    const bad: Array<() => unknown> = [
      () => evaluatePolicy({}, pay('1', { to: TO.slice(0, -1) }), EMPTY, NOW),
      () => evaluatePolicy({}, pay('1', { to: ` ${TO}` }), EMPTY, NOW),
      () => evaluatePolicy({}, pay('1', { kind: 'refund' as 'pay' }), EMPTY, NOW),
      () => evaluatePolicy({}, pay('1', { capability: 5 as unknown as string }), EMPTY, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, dailySpentMicro: -1n }, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, weeklySpentMicro: 1 as unknown as bigint }, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, recentCount: -1 }, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, recentCount: 1.5 }, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, lastPaymentAt: new Date(Number.NaN) }, NOW),
      () => evaluatePolicy({}, pay('1'), { ...EMPTY, lastPaymentAt: '2026-01-01' as unknown as Date }, NOW),
      () => evaluatePolicy({}, pay('1'), EMPTY, new Date('x')),
    ];
    for (const [i, call] of bad.entries()) assert.throws(call, PolicyInputError, `case ${i}`);
  });
  it('evaluateParsedPolicy gives the same decision as evaluatePolicy', () => {
    const p = policy({ per_tx_cap_usd: '1', daily_cap_usd: '2' });
    assert.deepEqual(
      evaluateParsedPolicy(parsePolicy(p), pay('1.5'), EMPTY, NOW),
      evaluatePolicy(p, pay('1.5'), EMPTY, NOW),
    );
  });
  it('policyViolations names the same violations, and checks its inputs the same way', () => {
    const p = policy({
      ...caps('1', '1', '1', '1'),
      velocity_cap: { max_count: 1, window_seconds: 60 },
      counterparty_blocklist: [TO],
      cooling_off: 60,
    });
    const busy: SpendState = { ...EMPTY, recentCount: 1, lastPaymentAt: NOW };
    for (const [request, state] of [
      [pay('2'), busy],
      [pay('0.5', { to: OTHER }), EMPTY],
      [transfer('2'), EMPTY],
    ] as const) {
      assert.deepEqual(
        policyViolations(parsePolicy(p), request, state, NOW),
        evaluatePolicy(p, request, state, NOW).violations,
      );
    }
    assert.deepEqual(policyViolations(parsePolicy(p), pay('0.5', { to: OTHER }), EMPTY, NOW), []);
    assert.throws(
      () => policyViolations(parsePolicy({}), pay('1', { to: TO.slice(0, -1) }), EMPTY, NOW),
      PolicyInputError,
    );
  });
});
