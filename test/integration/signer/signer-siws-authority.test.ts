/**
 * Owners who signed in with Solana (docs/adr/0012-owner-signed-policies.md): the signer records a SIWS owner as
 * the policy authority of the account from the owner's own sign-in (Ed25519 over the message, by the key the
 * message names), and takes policy documents from that owner only as the Ed25519-signed statement
 * (policy/policy-statement.ts). Through a real signer process (SoftHSM, its own PostgreSQL store).
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { newSolanaSigner } from '../../support/sign-in.js';
import type { TestSigner } from '../../support/signer-harness.js';
import {
  ownerAuthority,
  refusal,
  siwsAuthority,
  statementSigned,
  useStoredSigner,
  walletOps,
} from './signer-test-helpers.js';

const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));

describe('owner-signed policies of owners who signed in with Solana (signer socket, own store)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  useStoredSigner('treasury-siws-authority-', (started) => (signer = started));
  const owner = newSolanaSigner();
  const intruder = newSolanaSigner();

  it('records the SIWS owner from a sign-in their key signed, and refuses one signed by another key', async () => {
    const made = await signer.client.call('create_account_key', { authority: siwsAuthority(owner) });
    assert.deepEqual(made.authority, { kind: 'owner', address: owner.address });
    const w = await walletOps(signer, made.account_key_ref).wallet();
    assert.deepEqual(w.policy_authority, { kind: 'owner', address: owner.address });

    const forged = await refusal(
      signer.client.call('create_account_key', { authority: siwsAuthority(owner, intruder) }),
    );
    assert.equal(forged.code, 'policy_signature_invalid');
    assert.equal(forged.details.rule, 'authority_proof');
    // A sign-in naming the intruder, presented for the owner's address.
    const renamed = await refusal(
      signer.client.call('create_account_key', {
        authority: { ...siwsAuthority(intruder), address: owner.address },
      }),
    );
    assert.equal(renamed.code, 'policy_signature_invalid');
    // A SIWE proof cannot name a Solana owner, nor a SIWS proof an EVM one (the schema refuses both shapes).
    const evm = await ownerAuthority(privateKeyToAccount(generatePrivateKey()));
    for (const authority of [
      { ...evm, address: owner.address },
      { ...siwsAuthority(owner), address: evm.address },
    ]) {
      const mixed = await refusal(signer.client.call('create_account_key', { authority: authority as never }));
      assert.equal(mixed.code, 'invalid_request');
    }
  });

  it("takes the owner's Ed25519 statement, refuses another key's, an EIP-712 signature and an older version, and enforces it", async () => {
    const made = await signer.client.call('create_account_key', { authority: siwsAuthority(owner) });
    const ops = walletOps(signer, made.account_key_ref);
    const w = await ops.wallet();

    const byIntruder = await refusal(
      signer.client.call('set_wallet_policy', statementSigned(intruder, w.address, { per_tx_cap_usd: '1000' }, 1)),
    );
    assert.equal(byIntruder.code, 'policy_signature_invalid');
    assert.equal(byIntruder.details.rule, 'authority');
    // An EVM key's EIP-712 signature of the same document stands for no Solana authority.
    const evmKey = privateKeyToAccount(generatePrivateKey());
    const issuedAt = Math.floor(Date.now() / 1000);
    const typed = policyTypedData({ wallet: w.address, policy: {} as never, version: 1, issuedAt });
    const eip712 = await refusal(
      signer.client.call('set_wallet_policy', {
        address: w.address,
        policy: {} as never,
        version: 1,
        issued_at: issuedAt,
        signature: await evmKey.signTypedData(typed),
      }),
    );
    assert.equal(eip712.code, 'policy_signature_invalid');
    // The owner's statement for another policy than the one sent.
    const doc = statementSigned(owner, w.address, { per_tx_cap_usd: '1' }, 1);
    const swapped = await refusal(
      signer.client.call('set_wallet_policy', { ...doc, policy: { per_tx_cap_usd: '1000' } as never }),
    );
    assert.equal(swapped.code, 'policy_signature_invalid');

    const kept = await signer.client.call('set_wallet_policy', doc);
    assert.equal(kept.version, 1);
    assert.deepEqual(kept.authority, { kind: 'owner', address: owner.address });
    const stale = await refusal(
      signer.client.call('set_wallet_policy', statementSigned(owner, w.address, { per_tx_cap_usd: '1000' }, 1)),
    );
    assert.equal(stale.code, 'policy_version_stale');

    await ops.sign(w, usd(0.5));
    const over = await refusal(ops.sign(w, usd(1.5)));
    assert.equal(over.code, 'policy_denied');
    assert.equal(over.details.rule, 'per_tx_cap_usd');
    const read = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.deepEqual(read.authority, { kind: 'owner', address: owner.address });
    assert.equal(read.current?.version, 1);
  });
});
