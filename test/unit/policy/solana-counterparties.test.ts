/**
 * Counterparty lists with Solana payees (policy/counterparty-address.ts): base58 addresses of 32 bytes are
 * accepted and kept as spelled (base58 is case-sensitive), never lower-cased; the rules compare them exactly,
 * so a payee differing from a listed one only in case is another payee.
 */
import assert from 'node:assert/strict';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { EMPTY, NOW } from './policy-fixtures.js';

const PAYEE = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const SWAPPED_CASE = '4ZMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const EVM = '0x1111111111111111111111111111111111111111';

describe('policy: Solana counterparties', () => {
  it('accepts base58 addresses of 32 bytes beside 0x ones, as spelled, de-duplicated exactly', () => {
    const parsed = walletPolicySchema.parse({ counterparty_allowlist: [PAYEE, EVM, PAYEE, SWAPPED_CASE] });
    assert.deepEqual(parsed.counterparty_allowlist, [PAYEE, EVM, SWAPPED_CASE]);
  });

  it('refuses base58 that does not spell 32 bytes, and a base58 address in both lists', () => {
    for (const bad of [
      '1111111111111111111111111111111',
      `${PAYEE}z`,
      'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz',
    ]) {
      assert.equal(walletPolicySchema.safeParse({ counterparty_blocklist: [bad] }).success, false, bad);
    }
    assert.equal(
      walletPolicySchema.safeParse({ counterparty_allowlist: [PAYEE], counterparty_blocklist: [PAYEE] }).success,
      false,
    );
  });

  it("refuses Solana's all-zero key in either list, as the EVM zero address is refused", () => {
    for (const list of ['counterparty_allowlist', 'counterparty_blocklist'] as const) {
      for (const zero of ['11111111111111111111111111111111', '0x0000000000000000000000000000000000000000']) {
        const parsed = walletPolicySchema.safeParse({ [list]: [PAYEE, zero] });
        assert.equal(parsed.success, false, `${list}: ${zero}`);
        assert.match(parsed.error!.issues[0]!.message, /can never be a recipient/);
      }
    }
  });

  it('the blocklist refuses the listed base58 payee only, and reports it as spelled', () => {
    const policy = walletPolicySchema.parse({ counterparty_blocklist: [PAYEE] });
    const denied = evaluatePolicy(policy, { kind: 'pay', amountMicro: 1n, to: PAYEE }, EMPTY, NOW);
    assert.equal(denied.allowed, false);
    assert.equal(denied.violations[0]!.rule, 'counterparty_blocklist');
    assert.equal(denied.violations[0]!.counterparty, PAYEE);
    assert.equal(evaluatePolicy(policy, { kind: 'pay', amountMicro: 1n, to: SWAPPED_CASE }, EMPTY, NOW).allowed, true);
  });

  it('the allowlist admits the listed base58 payee exactly', () => {
    const policy = walletPolicySchema.parse({ counterparty_allowlist: [PAYEE] });
    assert.equal(evaluatePolicy(policy, { kind: 'pay', amountMicro: 1n, to: PAYEE }, EMPTY, NOW).allowed, true);
    assert.equal(evaluatePolicy(policy, { kind: 'pay', amountMicro: 1n, to: SWAPPED_CASE }, EMPTY, NOW).allowed, false);
  });
});
