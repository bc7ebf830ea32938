/**
 * The owner-signed policy in its `policy_text` form (policy/signed-policy.ts, docs/adr/0012-owner-signed-policies.md):
 * the EIP-712 document that spells the policy out, so that the owner's wallet shows what is signed. Through a real
 * signer process (SoftHSM, its own PostgreSQL store): a document signed in that form and naming it is kept, in force
 * and recorded with its form; the signer reads a signature under the form named and no other — the same signature
 * named as the hash form (or naming none), or a hash-form signature named as the text form, is not the authority's;
 * an Ed25519 statement named as the text form is refused (`rule: signature_form`).
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newSolanaSigner } from '../../support/sign-in.js';
import type { TestSigner } from '../../support/signer-harness.js';
import {
  ownerAuthority,
  refusal,
  signedPolicy,
  siwsAuthority,
  statementSigned,
  textSignedPolicy,
  useStoredSigner,
  walletOps,
} from './signer-test-helpers.js';

const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));

describe('owner-signed policies in the policy_text form (signer socket, own store)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  const stored = useStoredSigner('treasury-policy-text-form-', (started) => (signer = started));
  const owner = privateKeyToAccount(generatePrivateKey());

  /** The forms the store's history recorded for `address`, by version. */
  async function historyForms(address: string): Promise<Array<[number, string]>> {
    const client = new pg.Client({ connectionString: stored.store().connectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string; signature_form: string }>(
        'SELECT version, signature_form FROM signer_policy_history WHERE address = $1 ORDER BY version',
        [address.startsWith('0x') ? address.toLowerCase() : address],
      );
      return rows.map((r) => [Number(r.version), r.signature_form]);
    } finally {
      await client.end();
    }
  }

  it('keeps a text-form document naming its form and enforces it; refuses it named otherwise, and a hash-form one named as text', async () => {
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    const ops = walletOps(signer, made.account_key_ref);
    const w = await ops.wallet();
    const policy = { per_tx_cap_usd: '1' };
    const text = await textSignedPolicy(owner, w.address, policy, 1);

    // The same signature without its form, or named as the hash form: recovered under that form, another key.
    const { form: _form, ...unnamed } = text;
    for (const misnamed of [unnamed, { ...text, form: 'policy_hash' as const }]) {
      const r = await refusal(signer.client.call('set_wallet_policy', misnamed));
      assert.deepEqual([r.code, r.details.rule], ['policy_signature_invalid', 'authority']);
    }
    // A hash-form signature named as the text form: likewise.
    const hashSigned = await signedPolicy(owner, w.address, policy, 1);
    const asText = await refusal(signer.client.call('set_wallet_policy', { ...hashSigned, form: 'policy_text' }));
    assert.deepEqual([asText.code, asText.details.rule], ['policy_signature_invalid', 'authority']);
    assert.equal((await signer.client.call('get_wallet_policy', { address: w.address })).current, null);

    const kept = await signer.client.call('set_wallet_policy', text);
    assert.deepEqual([kept.version, kept.authority], [1, { kind: 'owner', address: owner.address }]);
    await ops.sign(w, usd(0.5));
    const over = await refusal(ops.sign(w, usd(1.5)));
    assert.deepEqual([over.code, over.details.rule], ['policy_denied', 'per_tx_cap_usd']);
    // The next version in the hash form (the form absent) is taken as before: both forms stand for the authority.
    const next = await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, {}, 2));
    assert.equal(next.version, 2);
    assert.deepEqual(await historyForms(w.address), [
      [1, 'policy_text'],
      [2, 'policy_hash'],
    ]);
  });

  it('refuses the text form beside an Ed25519 statement (a Solana authority signs the statement only)', async () => {
    const solanaOwner = newSolanaSigner();
    const made = await signer.client.call('create_account_key', { authority: siwsAuthority(solanaOwner) });
    const w = await walletOps(signer, made.account_key_ref).wallet();
    const statement = statementSigned(solanaOwner, w.address, { per_tx_cap_usd: '1' }, 1);
    const r = await refusal(signer.client.call('set_wallet_policy', { ...statement, form: 'policy_text' }));
    assert.deepEqual([r.code, r.details.rule], ['policy_signature_invalid', 'signature_form']);
    assert.equal((await signer.client.call('get_wallet_policy', { address: w.address })).current, null);
    // The statement itself, naming no form, is the owner's as before.
    assert.equal((await signer.client.call('set_wallet_policy', statement)).version, 1);
    assert.deepEqual(await historyForms(w.address), [[1, 'policy_hash']]);
  });
});
