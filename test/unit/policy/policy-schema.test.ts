/**
 * policy-schema.ts and normalize-policy.ts: what a policy body may hold, the hostile tables against every
 * field, EIP-55 handling, the zero-address decision, and the canonical stored form.
 */
import assert from 'node:assert/strict';
import { normalizePolicy } from '../../../policy/normalize-policy.js';
import {
  POLICY_LIMITS,
  counterpartyAddressSchema,
  evmAddressSchema,
  walletPolicySchema,
} from '../../../policy/policy-schema.js';
import { OTHER, THIRD, TO, ZERO_ADDRESS, caps, hostile, policy, upper } from './policy-fixtures.js';

const refused = (body: unknown): boolean => !walletPolicySchema.safeParse(body).success;

describe('policy schema: addresses', () => {
  it('accepts all-lower, all-upper and correctly checksummed mixed case; outputs the checksum', () => {
    for (const spelling of [TO, TO.toLowerCase(), upper(TO)]) assert.equal(evmAddressSchema.parse(spelling), TO);
  });

  it('refuses every hostile address of the shared table except the zero address, which is a valid format', () => {
    for (const value of [...hostile.evm_address!, ...hostile.any!]) {
      const ok = evmAddressSchema.safeParse(value).success;
      assert.equal(ok, value === ZERO_ADDRESS, JSON.stringify(value));
    }
  });

  it('refuses a checksum with one letter in the wrong case', () => {
    const flipped = TO.replace('Bc6', 'bc6');
    assert.equal(evmAddressSchema.safeParse(flipped).success, false);
  });

  it('decision: counterparty lists refuse the zero address (it can never be paid; listing it is a mistake)', () => {
    assert.equal(counterpartyAddressSchema.safeParse(ZERO_ADDRESS).success, false);
    assert.ok(refused({ counterparty_allowlist: [ZERO_ADDRESS] }));
    assert.ok(refused({ counterparty_blocklist: [TO, ZERO_ADDRESS] }));
  });

  it('refuses every hostile address in either list', () => {
    for (const value of [...hostile.evm_address!, ...hostile.any!]) {
      assert.ok(refused({ counterparty_allowlist: [value] }), JSON.stringify(value));
      assert.ok(refused({ counterparty_blocklist: [OTHER, value] }), JSON.stringify(value));
    }
  });

  it('refuses an address in both lists, whatever its case', () => {
    assert.ok(refused({ counterparty_allowlist: [TO], counterparty_blocklist: [TO.toLowerCase()] }));
    assert.ok(refused({ counterparty_allowlist: [upper(TO), OTHER], counterparty_blocklist: [THIRD, TO] }));
  });

  it(`bounds each list at ${POLICY_LIMITS.maxListLength} entries`, () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    assert.equal(policy({ counterparty_allowlist: many(1_000) }).counterparty_allowlist!.length, 1_000);
    assert.ok(refused({ counterparty_allowlist: many(1_001) }));
    assert.ok(refused({ counterparty_blocklist: many(1_001) }));
  });
});

describe('policy schema: amounts, counts and capability caps', () => {
  it('accepts a full policy', () => {
    const p = policy({
      ...caps('5', '50', '200', '500'),
      velocity_cap: { max_count: 10, window_seconds: 60 },
      counterparty_allowlist: [TO.toLowerCase()],
      counterparty_blocklist: [upper(OTHER)],
      cooling_off: 30,
      capability_cap_usd: { 'search.web': '0.5', 'llm.*': '2', '*': '1' },
    });
    assert.deepEqual(p.counterparty_allowlist, [TO]);
    assert.deepEqual(p.counterparty_blocklist, [OTHER]);
    assert.equal(policy({}).per_tx_cap_usd, undefined);
  });

  it('refuses every hostile USD value in every money field (zero included for per-tx and window caps)', () => {
    for (const value of [...hostile.usd_amount!, ...hostile.any!]) {
      for (const rule of ['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd']) {
        assert.ok(refused({ [rule]: value }), `${rule}=${JSON.stringify(value)}`);
      }
      if (value !== '0')
        assert.ok(refused({ capability_cap_usd: { x: value } }), `capability cap ${JSON.stringify(value)}`);
    }
    assert.ok(refused({ per_tx_cap_usd: '0.000000' }));
  });

  it('decision: a capability cap may be "0" (forbids that capability)', () => {
    assert.deepEqual(policy({ capability_cap_usd: { 'llm.expensive': '0.00' } }).capability_cap_usd, {
      'llm.expensive': '0',
    });
  });

  it('bounds velocity_cap and cooling_off to integers in range', () => {
    assert.ok(!refused({ velocity_cap: { max_count: 1, window_seconds: 1 } }));
    assert.ok(!refused({ velocity_cap: { max_count: 1_000_000, window_seconds: 31 * 86_400 } }));
    assert.ok(!refused({ cooling_off: 0 }));
    assert.ok(!refused({ cooling_off: 30 * 86_400 }));
    for (const bad of [
      { velocity_cap: { max_count: 0, window_seconds: 60 } },
      { velocity_cap: { max_count: 1_000_001, window_seconds: 60 } },
      { velocity_cap: { max_count: 1, window_seconds: 0 } },
      { velocity_cap: { max_count: 1, window_seconds: 31 * 86_400 + 1 } },
      { velocity_cap: { max_count: 1.5, window_seconds: 60 } },
      { velocity_cap: { max_count: '2', window_seconds: 60 } },
      { velocity_cap: { max_count: 2 } },
      { velocity_cap: { max_count: 2, window_seconds: 60, extra: 1 } },
      { cooling_off: -1 },
      { cooling_off: 30 * 86_400 + 1 },
      { cooling_off: 1.5 },
      { cooling_off: '30' },
    ]) {
      assert.ok(refused(bad), JSON.stringify(bad));
    }
    for (const value of hostile.any!) {
      assert.ok(refused({ velocity_cap: value }), JSON.stringify(value));
      if (value !== 0) assert.ok(refused({ cooling_off: value }), JSON.stringify(value));
    }
  });

  it('capability keys: grammar, trailing * only, lone *, 128 characters, 256 entries', () => {
    for (const good of ['a', 'search.web', 'llm.*', 'x402:weather/v1', 'a_b-c', '*', 'constructor', 'a'.repeat(128)]) {
      assert.ok(!refused({ capability_cap_usd: { [good]: '1' } }), good);
    }
    for (const bad of [
      '',
      'UPPER',
      '.a',
      '-a',
      'a*b',
      '**',
      'a**',
      ' a',
      'a b',
      'é',
      '__proto__',
      'a'.repeat(129),
      'a\n',
    ]) {
      assert.ok(refused({ capability_cap_usd: { [bad]: '1' } }), JSON.stringify(bad));
    }
    const caps = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, '1']));
    assert.ok(!refused({ capability_cap_usd: caps(256) }));
    assert.ok(refused({ capability_cap_usd: caps(257) }));
    for (const value of hostile.any!) {
      if (!(value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
        assert.ok(refused({ capability_cap_usd: value }), JSON.stringify(value));
      }
    }
  });

  it('refuses unknown fields, misspellings and prototype keys at the top level', () => {
    for (const bad of [
      { daily_cap: '1' },
      { cooling_off_seconds: 1 },
      JSON.parse('{"__proto__": {"daily_cap_usd": "1"}}'),
      { constructor: {} },
    ]) {
      assert.ok(refused(bad), JSON.stringify(bad));
    }
    for (const value of hostile.any!) {
      if (!(value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
        assert.ok(refused(value), JSON.stringify(value));
      }
    }
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  });
});

describe('normalizePolicy: the canonical stored form', () => {
  const messy = {
    monthly_cap_usd: '500.000',
    per_tx_cap_usd: '5.50',
    capability_cap_usd: { 'llm.*': '2.0', 'a.b': '0.100000', '*': '1' },
    counterparty_blocklist: [upper(OTHER), OTHER.toLowerCase(), THIRD],
    counterparty_allowlist: [TO.toLowerCase(), TO],
    velocity_cap: { window_seconds: 60, max_count: 3 },
    cooling_off: 0,
  };

  it('checksums and de-duplicates addresses, spells amounts canonically, sorts capability keys, fixes field order', () => {
    const p = policy(messy);
    assert.equal(
      JSON.stringify(p),
      JSON.stringify({
        per_tx_cap_usd: '5.5',
        monthly_cap_usd: '500',
        velocity_cap: { max_count: 3, window_seconds: 60 },
        counterparty_allowlist: [TO],
        counterparty_blocklist: [OTHER, THIRD],
        cooling_off: 0,
        capability_cap_usd: { '*': '1', 'a.b': '0.1', 'llm.*': '2' },
      }),
    );
  });

  it('is idempotent, and the schema accepts its own output unchanged', () => {
    const once = policy(messy);
    assert.deepEqual(normalizePolicy(once), once);
    assert.equal(JSON.stringify(policy(JSON.parse(JSON.stringify(once)))), JSON.stringify(once));
  });

  it('keeps an empty allowlist (it means: no recipient is allowed)', () => {
    assert.deepEqual(policy({ counterparty_allowlist: [] }), { counterparty_allowlist: [] });
  });
});
