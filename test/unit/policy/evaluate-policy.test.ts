/**
 * The pure policy engine: each rule's allow and deny sides at their exact boundaries, every violation
 * reported together, headroom, and the UTC calendar windows (midnight, Monday, the 1st).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { formatUsd, parseRawAmount, parseUsd } from '../../../policy/money.js';
import { walletPolicySchema, type WalletPolicy } from '../../../policy/policy-schema.js';
import type { SpendRequest, SpendState } from '../../../policy/policy-types.js';
import { policyWindows, velocityWindowStart } from '../../../policy/policy-windows.js';
import { matchCapabilityCap } from '../../../policy/rules/capability-cap.js';

const hostile = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8')) as Record<string, unknown[]>;
const TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const OTHER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const NOW = new Date('2026-11-22T12:00:00Z');
const EMPTY: SpendState = { dailySpentMicro: 0n, weeklySpentMicro: 0n, monthlySpentMicro: 0n, lastPaymentAt: null, recentCount: 0 };
const pay = (usd: string, extra: Partial<SpendRequest> = {}): SpendRequest => ({ kind: 'pay', amountMicro: parseUsd(usd), to: TO, ...extra });
const policy = (p: unknown): WalletPolicy => walletPolicySchema.parse(p);
const rules = (d: { violations: Array<{ rule: string }> }) => d.violations.map((v) => v.rule);

describe('money', () => {
  it('parses and formats USD exactly', () => {
    assert.equal(parseUsd('12.5'), 12_500_000n);
    assert.equal(parseUsd('0.000001'), 1n);
    assert.equal(formatUsd(1_500_000n), '1.5');
    assert.equal(formatUsd(1n), '0.000001');
    assert.equal(formatUsd(10_000_000n), '10');
    let seed = 42n;
    for (let i = 0; i < 500; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      const micro = seed % 10n ** 18n;
      assert.equal(parseUsd(formatUsd(micro)), micro);
    }
  });
  it('refuses every hostile USD spelling', () => {
    for (const value of hostile.usd_amount!) {
      if (value === '0') continue; // a valid amount; caps refuse it separately
      assert.throws(() => parseUsd(value as string), RangeError, String(value));
    }
  });
  it('refuses every hostile raw token amount', () => {
    for (const value of hostile.raw_token_amount!) assert.throws(() => parseRawAmount(value as string), RangeError, String(value));
    assert.equal(parseRawAmount('10000'), 10000n);
  });
});

describe('policy schema', () => {
  it('accepts a full policy and checksums addresses', () => {
    const p = policy({
      per_tx_cap_usd: '5',
      daily_cap_usd: '50',
      weekly_cap_usd: '200',
      monthly_cap_usd: '500',
      velocity_cap: { max_count: 10, window_seconds: 60 },
      counterparty_allowlist: [TO.toLowerCase()],
      counterparty_blocklist: [OTHER.toUpperCase().replace('0X', '0x')],
      cooling_off: 30,
      capability_cap_usd: { 'search.web': '0.5', 'llm.*': '2' },
    });
    assert.deepEqual(p.counterparty_allowlist, [TO]);
    assert.deepEqual(p.counterparty_blocklist, [OTHER]);
  });
  it('refuses bad checksums, contradictions, unknown fields and zero caps', () => {
    for (const bad of [
      { counterparty_allowlist: ['0x209693BC6AFC0C5328BA36FAF03C514EF312287c'] },
      { counterparty_allowlist: [TO], counterparty_blocklist: [TO.toLowerCase()] },
      { per_tx_cap_usd: '0' },
      { daily_cap: '1' },
      { velocity_cap: { max_count: 0, window_seconds: 60 } },
      { capability_cap_usd: { 'UPPER': '1' } },
      { cooling_off: -1 },
    ]) {
      assert.equal(walletPolicySchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});

describe('evaluatePolicy', () => {
  it('allows anything under an empty policy', () => {
    assert.deepEqual(evaluatePolicy({}, pay('1000'), EMPTY, NOW), { allowed: true, violations: [], headroom: {} });
  });

  it('per_tx_cap_usd: at the cap allowed, one micro over denied', () => {
    const p = policy({ per_tx_cap_usd: '5' });
    assert.equal(evaluatePolicy(p, pay('5'), EMPTY, NOW).allowed, true);
    const d = evaluatePolicy(p, pay('5.000001'), EMPTY, NOW);
    assert.deepEqual(rules(d), ['per_tx_cap_usd']);
    assert.equal(d.violations[0]!.limit, '5');
  });

  for (const [rule, field, headroom] of [
    ['daily_cap_usd', 'dailySpentMicro', 'daily_usd'],
    ['weekly_cap_usd', 'weeklySpentMicro', 'weekly_usd'],
    ['monthly_cap_usd', 'monthlySpentMicro', 'monthly_usd'],
  ] as const) {
    it(`${rule}: spent + amount at the cap allowed, above denied, headroom reported`, () => {
      const p = policy({ [rule]: '10' });
      const state = { ...EMPTY, [field]: parseUsd('7') };
      const ok = evaluatePolicy(p, pay('3'), state, NOW);
      assert.equal(ok.allowed, true);
      assert.equal(ok.headroom[headroom], '0');
      const no = evaluatePolicy(p, pay('3.01'), state, NOW);
      assert.deepEqual(rules(no), [rule]);
      assert.equal(no.headroom[headroom], '3');
    });
  }

  it('velocity_cap: the max_count-th payment allowed, the next denied', () => {
    const p = policy({ velocity_cap: { max_count: 3, window_seconds: 60 } });
    assert.equal(evaluatePolicy(p, pay('1'), { ...EMPTY, recentCount: 2 }, NOW).allowed, true);
    const d = evaluatePolicy(p, pay('1'), { ...EMPTY, recentCount: 3 }, NOW);
    assert.deepEqual(rules(d), ['velocity_cap']);
    assert.equal(d.headroom.velocity_remaining, 0);
    assert.equal(velocityWindowStart(60, NOW).toISOString(), '2026-11-22T11:59:00.000Z');
  });

  it('counterparty_allowlist and blocklist compare case-insensitively and report checksummed', () => {
    const allow = policy({ counterparty_allowlist: [TO] });
    assert.equal(evaluatePolicy(allow, pay('1', { to: TO.toLowerCase() }), EMPTY, NOW).allowed, true);
    const notAllowed = evaluatePolicy(allow, pay('1', { to: OTHER.toLowerCase() }), EMPTY, NOW);
    assert.deepEqual(rules(notAllowed), ['counterparty_allowlist']);
    assert.equal(notAllowed.violations[0]!.counterparty, OTHER);
    const block = policy({ counterparty_blocklist: [OTHER] });
    assert.equal(evaluatePolicy(block, pay('1'), EMPTY, NOW).allowed, true);
    assert.deepEqual(rules(evaluatePolicy(block, pay('1', { to: OTHER.toUpperCase().replace('0X', '0x') }), EMPTY, NOW)), ['counterparty_blocklist']);
  });

  it('cooling_off: refused within N seconds of the last payment, allowed at N', () => {
    const p = policy({ cooling_off: 30 });
    const at = (secondsAgo: number) => ({ ...EMPTY, lastPaymentAt: new Date(NOW.getTime() - secondsAgo * 1000) });
    assert.equal(evaluatePolicy(p, pay('1'), at(30), NOW).allowed, true);
    const d = evaluatePolicy(p, pay('1'), at(29.5), NOW);
    assert.deepEqual(rules(d), ['cooling_off']);
    assert.equal(d.violations[0]!.retry_after_seconds, 1);
    assert.equal(evaluatePolicy(p, pay('1'), EMPTY, NOW).allowed, true);
  });

  it('capability_cap_usd: exact beats prefix, longest prefix wins, unmatched passes, missing capability fails closed', () => {
    const caps = { 'llm.*': '2', 'llm.gpt.*': '1', 'llm.gpt.mini': '0.1', search: '0.5' };
    assert.deepEqual(matchCapabilityCap(caps, 'llm.gpt.mini'), { key: 'llm.gpt.mini', cap: '0.1' });
    assert.deepEqual(matchCapabilityCap(caps, 'llm.gpt.large'), { key: 'llm.gpt.*', cap: '1' });
    assert.deepEqual(matchCapabilityCap(caps, 'llm.claude'), { key: 'llm.*', cap: '2' });
    assert.equal(matchCapabilityCap(caps, 'search.web'), undefined);
    const p = policy({ capability_cap_usd: caps });
    assert.equal(evaluatePolicy(p, pay('1', { capability: 'llm.gpt.large' }), EMPTY, NOW).allowed, true);
    assert.deepEqual(rules(evaluatePolicy(p, pay('1.01', { capability: 'llm.gpt.large' }), EMPTY, NOW)), ['capability_cap_usd']);
    assert.equal(evaluatePolicy(p, pay('100', { capability: 'weather' }), EMPTY, NOW).allowed, true);
    assert.deepEqual(rules(evaluatePolicy(p, pay('0.01'), EMPTY, NOW)), ['capability_cap_usd']);
  });

  it('fail-closed: a transfer on a wallet with any capability cap is refused with its own rule', () => {
    const p = policy({ capability_cap_usd: { x: '100' } });
    const d = evaluatePolicy(p, { kind: 'transfer', amountMicro: 1n, to: TO }, EMPTY, NOW);
    assert.deepEqual(rules(d), ['transfer_not_permitted_with_capability_cap']);
    assert.equal(evaluatePolicy(policy({ per_tx_cap_usd: '1' }), { kind: 'transfer', amountMicro: 1n, to: TO }, EMPTY, NOW).allowed, true);
  });

  it('reports every violated rule, not only the first', () => {
    const p = policy({ per_tx_cap_usd: '1', daily_cap_usd: '1', weekly_cap_usd: '1', monthly_cap_usd: '1', velocity_cap: { max_count: 1, window_seconds: 60 }, counterparty_allowlist: [OTHER], counterparty_blocklist: [TO], cooling_off: 60, capability_cap_usd: { a: '1' } });
    const d = evaluatePolicy(p, pay('2', { capability: 'a' }), { ...EMPTY, recentCount: 1, lastPaymentAt: NOW }, NOW);
    assert.deepEqual(rules(d).sort(), ['capability_cap_usd', 'cooling_off', 'counterparty_allowlist', 'counterparty_blocklist', 'daily_cap_usd', 'monthly_cap_usd', 'per_tx_cap_usd', 'velocity_cap', 'weekly_cap_usd']);
  });
});

describe('policyWindows (UTC calendar)', () => {
  const w = (iso: string) => {
    const x = policyWindows(new Date(iso));
    return [x.dayStart.toISOString(), x.weekStart.toISOString(), x.monthStart.toISOString()];
  };
  it('starts the day at 00:00 UTC', () => {
    assert.equal(w('2026-11-22T23:59:59.999Z')[0], '2026-11-22T00:00:00.000Z');
    assert.equal(w('2026-11-23T00:00:00.000Z')[0], '2026-11-23T00:00:00.000Z');
  });
  it('starts the ISO week on Monday 00:00 UTC, across month and year boundaries', () => {
    assert.equal(w('2026-11-22T23:59:59.999Z')[1], '2026-11-16T00:00:00.000Z'); // Sunday → previous Monday
    assert.equal(w('2026-11-23T00:00:00.000Z')[1], '2026-11-23T00:00:00.000Z'); // Monday
    assert.equal(w('2027-01-01T10:00:00Z')[1], '2026-12-28T00:00:00.000Z');
  });
  it('starts the month on the 1st 00:00 UTC, leap February included', () => {
    assert.equal(w('2028-02-29T23:59:59.999Z')[2], '2028-02-01T00:00:00.000Z');
    assert.equal(w('2028-03-01T00:00:00.000Z')[2], '2028-03-01T00:00:00.000Z');
  });
});
