/**
 * `capability_required` (docs/adr/0003-policy-engine.md, amendment): capability caps bound the payments that
 * name a capability; a payment naming none passes the capability rule unless the policy sets
 * `capability_required: true`, which keeps the fail-closed refusal. Malformed capabilities and transfers are
 * refused either way. The field is stored only when true, so the canonical form — and the owner-signed
 * policy hash over it — of every policy written before the field existed is unchanged.
 */
import assert from 'node:assert/strict';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { parsePolicy } from '../../../policy/parse-policy.js';
import { PolicyInputError } from '../../../policy/policy-errors.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { EMPTY, NOW, TO, pay, policy, rules, transfer } from './policy-fixtures.js';

const CAPS = { 'search.*': '0.01', 'llm.*': '1' };

describe('capability caps and payments that name no capability', () => {
  const open = policy({ capability_cap_usd: CAPS });
  const required = policy({ capability_cap_usd: CAPS, capability_required: true });

  it('a named capability is capped whether or not capability_required is set', () => {
    for (const p of [open, required]) {
      assert.equal(evaluatePolicy(p, pay('0.01', { capability: 'search.web' }), EMPTY, NOW).allowed, true);
      const d = evaluatePolicy(p, pay('0.010001', { capability: 'search.web' }), EMPTY, NOW);
      assert.deepEqual(rules(d), ['capability_cap_usd']);
      assert.equal(d.violations[0]!.matched, 'search.*');
    }
  });

  it('without capability_required, a pay naming no capability passes the capability rule', () => {
    assert.deepEqual(evaluatePolicy(open, pay('5'), EMPTY, NOW), { allowed: true, violations: [], headroom: {} });
  });

  it('the other rules still apply to a pay naming no capability', () => {
    const capped = policy({ capability_cap_usd: CAPS, per_tx_cap_usd: '1' });
    assert.deepEqual(rules(evaluatePolicy(capped, pay('1.5'), EMPTY, NOW)), ['per_tx_cap_usd']);
  });

  it('with capability_required: true, a pay naming no capability (or the empty string) is refused', () => {
    for (const capability of [undefined, '']) {
      const d = evaluatePolicy(required, pay('0.000001', { capability }), EMPTY, NOW);
      assert.deepEqual(rules(d), ['capability_cap_usd'], JSON.stringify(capability));
      assert.equal(d.violations[0]!.reason, 'capability_required');
    }
  });

  it('a malformed capability is refused either way (the empty string too, without capability_required)', () => {
    for (const [p, capabilities] of [
      [open, ['', 'LLM.GPT', 'llm.*', 'a b', 'x'.repeat(129)]],
      [required, ['LLM.GPT', 'llm.*', 'a b', 'x'.repeat(129)]],
    ] as const) {
      for (const capability of capabilities) {
        const d = evaluatePolicy(p, pay('0.001', { capability }), EMPTY, NOW);
        assert.deepEqual(rules(d), ['capability_cap_usd'], JSON.stringify(capability));
        assert.equal(d.violations[0]!.reason, 'capability_malformed');
      }
    }
  });

  it('transfers stay refused on a wallet with capability caps, with or without the field', () => {
    for (const p of [open, required])
      assert.deepEqual(rules(evaluatePolicy(p, transfer('0.000001'), EMPTY, NOW)), [
        'transfer_not_permitted_with_capability_cap',
      ]);
  });

  it('has no effect without capability caps', () => {
    const alone = policy({ capability_required: true });
    assert.equal(evaluatePolicy(alone, pay('1'), EMPTY, NOW).allowed, true);
    assert.equal(evaluatePolicy(alone, transfer('1'), EMPTY, NOW).allowed, true);
  });
});

describe('capability_required: schema, canonical form and hash', () => {
  it('is stored only when true; false is the default and is dropped', () => {
    assert.deepEqual(
      policy({ capability_cap_usd: CAPS, capability_required: false }),
      policy({ capability_cap_usd: CAPS }),
    );
    assert.equal(policy({ capability_required: false }).capability_required, undefined);
    assert.equal(policy({ capability_required: true }).capability_required, true);
    assert.equal(parsePolicy(policy({ capability_cap_usd: CAPS, capability_required: true })).capabilityRequired, true);
    assert.equal(parsePolicy(policy({ capability_cap_usd: CAPS })).capabilityRequired, undefined);
  });

  it('refuses a non-boolean in the body and in a stored policy', () => {
    for (const value of ['true', 1, null, {}, []]) {
      assert.equal(walletPolicySchema.safeParse({ capability_required: value }).success, false, JSON.stringify(value));
      assert.throws(() => parsePolicy({ capability_required: value }), PolicyInputError);
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
    assert.equal(policyDocumentHash(policy({ ...existing, capability_required: false })), HASH);
    assert.notEqual(policyDocumentHash(policy({ ...existing, capability_required: true })), HASH);
  });
});
