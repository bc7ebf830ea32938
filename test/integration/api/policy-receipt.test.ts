/**
 * GET /v1/wallets/{id}/policy/receipt through HTTP, the real signer (SoftHSM, its own policy store) and PostgreSQL
 * (src/api/wallets/policy-receipt.ts): the signer's receipt of the policy it holds, signed by the wallet's own key
 * around the caller's nonce, relayed untouched.
 * - It recovers to the wallet's address and names the version and hash the signer holds; when the API's database is
 *   rewritten to say a newer document applied (a compromised API), the receipt still says what the signer holds.
 * - A nonce in any other form than 64 lower-case hex digits, or an extra query key, is 400; another account's wallet
 *   404; a wallet whose address (EVM or Solana) the signer holds no key for (the API's row rewritten) 409
 *   `policy_receipt_unavailable` (rule `unknown_wallet`). Solana wallets' receipts: ./policy-receipt-solana.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { getAddressDecoder } from '@solana/kit';
import { getAddress, recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { INHERITED_NAME_QUERIES } from '../../support/hostile-refusals.js';
import { signInBody } from '../../support/sign-in.js';

const nonce = () => randomBytes(32).toString('hex');

describe('policy receipts (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  const owner = privateKeyToAccount(generatePrivateKey());
  let pat: string;

  before(async () => {
    t = await startTestTreasury();
    const signedIn = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, owner) });
    assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
    const minted = await t.request('POST', '/v1/pats', {
      token: signedIn.body.session,
      body: { scope_type: 'treasury' },
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
  });
  after(async () => {
    await t?.stop();
  });

  async function newWallet(token = pat): Promise<{ id: string; address: string }> {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: { per_tx_cap_usd: '1' } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  async function putSigned(wallet: { id: string; address: string }, policy: Record<string, unknown>, version: number) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const parsed = walletPolicySchema.parse(policy);
    const signature = await owner.signTypedData(
      policyTypedData({ wallet: wallet.address, policy: parsed, version, issuedAt }),
    );
    const body = { policy, version, issued_at: issuedAt, signature };
    const res = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, { token: pat, body });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  const receipt = (walletId: string, query: string, token = pat) =>
    t.request('GET', `/v1/wallets/${walletId}/policy/receipt?${query}`, { token });

  it("relays the signer's receipt, signed by the wallet key; a rewritten database does not change it", async () => {
    const wallet = await newWallet();
    const set = await putSigned(wallet, { per_tx_cap_usd: '1' }, 1);
    const n = nonce();
    const res = await receipt(wallet.id, `nonce=${n}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(res.body).sort(), ['scheme', 'signature', 'statement', 'wallet_id']);
    assert.equal(res.body.scheme, 'eip191');
    const recovered = await recoverMessageAddress({ message: res.body.statement, signature: res.body.signature });
    assert.equal(recovered, getAddress(wallet.address));
    const lines: string[] = res.body.statement.split('\n');
    assert.equal(lines[0], 'Treasury signer policy receipt v1');
    assert.ok(lines.includes(`version: 1`));
    assert.ok(lines.includes(`policy_hash: ${set.owner_policy.policy_hash.toLowerCase()}`));
    assert.ok(lines.includes(`authority: owner ${owner.address}`));
    assert.equal(lines.at(-1), `nonce: ${n}`);

    // The API's own copy says version 2 applied (a compromised API): the signer still says version 1.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy_version: 2 });
    const again = await receipt(wallet.id, `nonce=${nonce()}`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok(again.body.statement.split('\n').includes('version: 1'));
  });

  it('refuses a malformed nonce or query (400), and answers 404 for another account', async () => {
    const wallet = await newWallet();
    const n = nonce();
    for (const query of [
      '',
      `nonce=${n.toUpperCase()}`,
      `nonce=0x${n}`,
      `nonce=${n.slice(2)}`,
      `nonce=${n}%0Aversion:%209`,
      `nonce=${n}&nonce=${n}`,
      `nonce=${n}&statement=x`,
      ...INHERITED_NAME_QUERIES.map((q) => `nonce=${n}&${q}`),
    ]) {
      const res = await receipt(wallet.id, query);
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, 'invalid_request', query);
    }
    const stranger = privateKeyToAccount(generatePrivateKey());
    const other = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, stranger) });
    const otherPat = await t.request('POST', '/v1/pats', {
      token: other.body.session,
      body: { scope_type: 'treasury' },
    });
    const res = await receipt(wallet.id, `nonce=${n}`, otherPat.body.pat);
    assert.equal(res.status, 404, JSON.stringify(res.body));
  });

  it('answers 409 policy_receipt_unavailable for an address the signer holds no key of, EVM or Solana', async () => {
    const wallet = await newWallet();
    // The API's row names a made-up address with the wallet's key references: the signer does not answer for it.
    const madeUp = privateKeyToAccount(generatePrivateKey()).address;
    await t.db.knex('wallets').where({ id: wallet.id }).update({ address: madeUp });
    const unknown = await receipt(wallet.id, `nonce=${nonce()}`);
    assert.equal(unknown.status, 409, JSON.stringify(unknown.body));
    assert.deepEqual([unknown.body.error_code, unknown.body.rule], ['policy_receipt_unavailable', 'unknown_wallet']);
    await t.db.knex('wallets').where({ id: wallet.id }).update({ address: wallet.address });

    // A Solana address the signer holds no key of (the row made one): the signer does not answer for it either.
    const solana = await newWallet();
    const base58 = getAddressDecoder().decode(randomBytes(32));
    await t.db
      .knex('wallets')
      .where({ id: solana.id })
      .update({ network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', address: base58 });
    const refused = await receipt(solana.id, `nonce=${nonce()}`);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.rule], ['policy_receipt_unavailable', 'unknown_wallet']);
  });
});
