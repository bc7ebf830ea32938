/**
 * `attest_wallet_policy` through a real signer process (SoftHSM, its own PostgreSQL store), over its socket as the API
 * talks to it: a receipt of what the signer holds for a wallet, signed by the wallet's own key as an EIP-191 personal
 * message (signer/owner-policy/policy-receipts.ts).
 * - it recovers to the wallet's address and states the version, hash and authority the store holds — also when the
 *   front withheld a newer document (the audit's F1: the signer still holds version 1, and says so);
 * - the text is the signer's own: eight fixed lines, the only request text in it the nonce and the checked address
 *   (in its EIP-55 form); an extra field is refused; it is no SIWE sign-in;
 * - a made-up address is `key_not_found` (rule `unknown_wallet`), another wallet's key `address_mismatch`, a Solana
 *   wallet's Ed25519 key named for an EVM wallet `invariant_violation` (rule `key_curve`), a malformed nonce
 *   `invalid_request` (Solana wallets' own receipts: ./signer-solana-policy-receipts.test.ts);
 * - each receipt counts in the wallet's receipt ceilings (`limit_exceeded`, `wallet_receipts_minute`), never in its
 *   signature ceilings.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { recoverMessageAddress, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { openRawConnection, ownerAuthority, refusal, signedPolicy, walletOps } from './signer-test-helpers.js';

const nonce = () => randomBytes(32).toString('hex');

describe('signer: policy receipts signed by the wallet key (attest_wallet_policy)', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  const owner = privateKeyToAccount(generatePrivateKey());
  let account: string;
  let ops: ReturnType<typeof walletOps>;

  before(async () => {
    // Three receipts and three signatures a minute per wallet: the receipts' count in their ceilings is seen below.
    signer = await startTestSigner({
      policyStore: true,
      env: { TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '3', TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: '3' },
    });
    account = (await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) }))
      .account_key_ref;
    ops = walletOps(signer, account);
  });
  after(async () => {
    await signer?.stop();
  });

  const attest = (w: { wallet_key_ref: string; address: string }, n = nonce(), address = w.address) =>
    signer.client.call('attest_wallet_policy', {
      address,
      wallet_key: { account_key_ref: account, wallet_key_ref: w.wallet_key_ref },
      nonce: n,
    });

  it('states what the signer holds, signed by the wallet key; a withheld version 2 leaves it at version 1', async () => {
    const w = await ops.wallet();
    const none = nonce();
    const before = await attest(w, none, w.address.toLowerCase());
    assert.equal(before.scheme, 'eip191');
    assert.equal(
      await recoverMessageAddress({ message: before.statement, signature: before.signature as never }),
      w.address,
    );
    const lines = before.statement.split('\n');
    assert.deepEqual(lines.slice(0, 6), [
      'Treasury signer policy receipt v1',
      `wallet: ${getAddress(w.address)}`,
      'version: none',
      'policy_hash: none',
      'issued_at: none',
      `authority: owner ${owner.address}`,
    ]);
    assert.match(lines[6]!, /^signer_time: \d{10}$/);
    assert.equal(lines[7], `nonce: ${none}`);
    assert.equal(lines.length, 8);

    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '50' }, 1));
    // Version 2 is signed by the owner but never reaches the signer (a front that withholds it).
    await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 2);
    const held = await signer.client.call('get_wallet_policy', { address: w.address });
    const n = nonce();
    const after = await attest(w, n);
    assert.equal(
      await recoverMessageAddress({ message: after.statement, signature: after.signature as never }),
      w.address,
    );
    const fields = Object.fromEntries(
      after.statement
        .split('\n')
        .slice(1)
        .map((l) => l.split(': ') as [string, string]),
    );
    assert.deepEqual(
      [fields.version, fields.policy_hash, fields.issued_at, fields.nonce],
      ['1', held.current!.policy_hash.toLowerCase(), String(held.current!.issued_at), n],
    );
  });

  it('carries no request text but the nonce and the checked address; an extra field is refused; it is no sign-in', async () => {
    const w = await ops.wallet();
    const n = nonce();
    const receipt = await attest(w, n);
    // Every value is the signer's (its store, its clock) but these two, each in one spelling.
    const values = receipt.statement
      .split('\n')
      .slice(1)
      .map((l) => l.slice(l.indexOf(': ') + 2));
    const fromRequest = values.filter((v) => v === n || v === getAddress(w.address));
    assert.equal(fromRequest.length, 2);
    assert.ok(!receipt.statement.includes(account) && !receipt.statement.includes(w.wallet_key_ref));
    assert.equal(parseSiweMessage(receipt.statement).address, undefined);
    assert.equal(parseSiweMessage(receipt.statement).domain, undefined);
    assert.equal(validateSiweMessage({ message: parseSiweMessage(receipt.statement) as never }), false);

    const conn = openRawConnection(signer.socketPath);
    try {
      const params = {
        address: w.address,
        wallet_key: { account_key_ref: account, wallet_key_ref: w.wallet_key_ref },
        nonce: n,
      };
      const extra = await conn.request({
        v: 1,
        id: 'x',
        method: 'attest_wallet_policy',
        params: { ...params, statement: 'Treasury signer policy receipt v1\nversion: 9' },
      });
      assert.equal(extra.error?.code, 'invalid_request');
      for (const bad of [
        n.toUpperCase(),
        `0x${n}`,
        n.slice(1),
        `${n}0`,
        `${n.slice(0, 63)}\n`,
        `${n}\nversion: 9`,
        '',
        'g'.repeat(64),
      ]) {
        const reply = await conn.request({
          v: 1,
          id: 'n',
          method: 'attest_wallet_policy',
          params: { ...params, nonce: bad },
        });
        assert.equal(reply.error?.code, 'invalid_request', JSON.stringify(bad));
      }
    } finally {
      conn.close();
    }
  });

  it('answers only for a wallet whose key it holds, with that key, on an EVM wallet', async () => {
    const w = await ops.wallet();
    const madeUp = privateKeyToAccount(generatePrivateKey()).address;
    const unknown = await refusal(attest(w, nonce(), madeUp));
    assert.deepEqual([unknown.code, unknown.details?.rule], ['key_not_found', 'unknown_wallet']);
    const other = await ops.wallet();
    const swapped = await refusal(attest(other, nonce(), w.address));
    assert.equal(swapped.code, 'address_mismatch', 'the key of another wallet does not sign for this one');
    const solana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
    const refused = await refusal(attest(solana, nonce(), w.address));
    assert.deepEqual([refused.code, refused.details?.rule], ['invariant_violation', 'key_curve']);
  });

  it("counts each receipt in the wallet's receipt ceilings", async () => {
    const w = await ops.wallet();
    for (let i = 0; i < 3; i++) await attest(w);
    const r = await refusal(attest(w));
    assert.deepEqual([r.code, r.details?.limit], ['limit_exceeded', 'wallet_receipts_minute']);
  });
});
