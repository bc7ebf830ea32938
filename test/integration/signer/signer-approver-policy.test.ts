/**
 * A wallet under the deployment's approver (docs/adr/0012-owner-signed-policies.md): the approver's signed policy
 * is accepted and kept — its history row names the approver's address that signed it, while the wallet itself
 * pins no address (rotating the approver is a configuration change) — and the signer then decides payments on it.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { walletOps } from './signer-test-helpers.js';

describe("a wallet under the approver: the approver's signed policy (signer socket, own store)", function () {
  this.timeout(120_000);
  const approver = privateKeyToAccount(generatePrivateKey());
  let signer: TestSigner;

  before(async () => {
    signer = await startTestSigner({ policyStore: true, env: { TREASURY_SIGNER_POLICY_APPROVER: approver.address } });
  });
  after(async () => {
    await signer?.stop();
  });

  it('is accepted, kept with the approver as its signer, and decides the payments', async () => {
    const made = await signer.client.call('create_account_key', {});
    assert.deepEqual(made.authority, { kind: 'approver', address: approver.address });
    const ops = walletOps(signer, made.account_key_ref);
    const w = await ops.wallet();
    const issuedAt = Math.floor(Date.now() / 1000);
    const policy = { per_tx_cap_usd: '1' } as never;
    const signature = await approver.signTypedData(
      policyTypedData({ wallet: w.address, policy, version: 1, issuedAt }),
    );
    const kept = await signer.client.call('set_wallet_policy', {
      address: w.address,
      policy,
      version: 1,
      issued_at: issuedAt,
      signature,
    });
    assert.deepEqual(kept.authority, { kind: 'approver', address: approver.address });
    const db = new pg.Client({ connectionString: signer.policyStore!.connectionString });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT h.authority_kind, h.authority_address, w.authority_address AS pinned FROM signer_policy_history h JOIN signer_wallets w USING (address) WHERE h.address = $1',
        [w.address.toLowerCase()],
      );
      assert.deepEqual(rows, [
        { authority_kind: 'approver', authority_address: approver.address.toLowerCase(), pinned: null },
      ]);
    } finally {
      await db.end();
    }
    await ops.sign(w, '1000000');
    await assert.rejects(ops.sign(w, '1000001'), (err: SignerError) => err.code === 'policy_denied');
  });
});
