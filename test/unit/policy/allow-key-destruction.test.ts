/**
 * `allow_key_destruction` (docs/adr/0012-owner-signed-policies.md, "Destroying a key under a signed policy"): the
 * owner's word, in a signed policy, that the wallet's key may be destroyed. No payment rule reads it. It is stored
 * only when true, so the canonical form — and the owner-signed hash over it — of every policy written before the
 * field existed is unchanged, and a policy signed without it keeps the key.
 */
import assert from 'node:assert/strict';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { parsePolicy } from '../../../policy/parse-policy.js';
import { PolicyInputError } from '../../../policy/policy-errors.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { EMPTY, NOW, TO, pay, policy } from './policy-fixtures.js';

describe('allow_key_destruction: schema, canonical form and hash', () => {
  it('is stored only when true; false is the default and is dropped; the parsed policy says it', () => {
    assert.deepEqual(policy({ daily_cap_usd: '5', allow_key_destruction: false }), policy({ daily_cap_usd: '5' }));
    assert.equal(policy({ allow_key_destruction: false }).allow_key_destruction, undefined);
    assert.equal(policy({ allow_key_destruction: true }).allow_key_destruction, true);
    assert.equal(parsePolicy(policy({ allow_key_destruction: true })).allowKeyDestruction, true);
    assert.equal(parsePolicy(policy({ daily_cap_usd: '5' })).allowKeyDestruction, undefined);
  });

  it('refuses a non-boolean in the body and in a stored policy', () => {
    for (const value of ['true', 1, 0, null, {}, []]) {
      assert.equal(
        walletPolicySchema.safeParse({ allow_key_destruction: value }).success,
        false,
        JSON.stringify(value),
      );
      assert.throws(() => parsePolicy({ allow_key_destruction: value }), PolicyInputError);
    }
  });

  it('changes no payment decision', () => {
    const base = { per_tx_cap_usd: '1', counterparty_allowlist: [TO] };
    for (const amount of ['0.5', '1.5']) {
      assert.deepEqual(
        evaluatePolicy(policy({ ...base, allow_key_destruction: true }), pay(amount), EMPTY, NOW),
        evaluatePolicy(policy(base), pay(amount), EMPTY, NOW),
      );
    }
  });

  it("leaves an existing owner-signed policy's hash unchanged (vector computed before the field existed)", () => {
    const existing = {
      per_tx_cap_usd: '0.50',
      daily_cap_usd: '5',
      capability_cap_usd: { 'search.*': '0.01', 'llm.*': '1' },
      counterparty_allowlist: [TO],
    };
    const HASH = '0x0bde7700a56349138561bc00295e348bb8d70883e51314081a15e412512b4ae0';
    assert.equal(policyDocumentHash(policy(existing)), HASH);
    assert.equal(policyDocumentHash(policy({ ...existing, allow_key_destruction: false })), HASH);
    assert.notEqual(policyDocumentHash(policy({ ...existing, allow_key_destruction: true })), HASH);
  });
});
