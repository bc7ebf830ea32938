/**
 * `attest_wallet_policy` for Solana wallets through a real signer process (SoftHSM Ed25519 keys, its own PostgreSQL
 * store), over its socket as the API talks to it (signer/owner-policy/policy-receipts.ts): the receipt is the wallet
 * key's Ed25519 signature of a Solana off-chain message holding the statement (signer/solana/policy-receipt-message.ts).
 * - it verifies (RFC 8032 strict, and by @solana/kit's own off-chain envelope check) under the wallet's address, over
 *   bytes rebuilt from the statement and the address alone — the same bytes by the signer's builder and the owner's
 *   check's — which begin with the `\xffsolana offchain` signing domain;
 *   it states the version, hash and authority the store holds — also when the front withheld a newer document;
 * - the owner's check (src/cli/commands/account/policy-receipt-check.ts) refuses it for another nonce, an edited
 *   statement, another wallet's address, or a scheme that does not fit the address;
 * - a made-up address is `key_not_found` (rule `unknown_wallet`), another wallet's key `address_mismatch`, an EVM key
 *   `invariant_violation` (rule `key_curve`), a destroyed key `key_destroyed`;
 * - each receipt counts in the wallet's receipt ceilings (`wallet_receipts_minute`), given back when it does not leave.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  getAddressDecoder,
  getBase58Decoder,
  getAddressEncoder,
  getBase58Encoder,
  getOffchainMessageDecoder,
  verifyOffchainMessageEnvelope,
  type Address,
  type OffchainMessageBytes,
  type SignatureBytes,
} from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  POLICY_RECEIPT_APPLICATION_DOMAIN,
  POLICY_RECEIPT_APPLICATION_LABEL,
} from '../../../policy/policy-receipt-offchain-message.js';
import { policyReceiptMessage } from '../../../signer/solana/policy-receipt-message.js';
import {
  receiptMessage,
  receiptStatus,
  verifyReceipt,
} from '../../../src/cli/commands/account/policy-receipt-check.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { ownerAuthority, refusal, signedPolicy, walletOps } from './signer-test-helpers.js';

const nonce = () => randomBytes(32).toString('hex');
const SIGNING_DOMAIN = Buffer.concat([Buffer.from([0xff]), Buffer.from('solana offchain', 'ascii')]);

/** The CLI check's refusal reason (details.reason), or 'verified'. */
async function reason(check: Promise<unknown>): Promise<string> {
  try {
    await check;
    return 'verified';
  } catch (err) {
    return (err as { details?: { reason?: string } }).details?.reason ?? String(err);
  }
}

describe('signer: Solana policy receipts signed as off-chain messages by the wallet key (attest_wallet_policy)', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  const owner = privateKeyToAccount(generatePrivateKey());
  let account: string;

  before(async () => {
    // Three receipts and three signatures a minute per wallet: the receipts' count in their ceilings is seen below.
    signer = await startTestSigner({
      policyStore: true,
      env: { TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '3', TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: '3' },
    });
    account = (await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) }))
      .account_key_ref;
  });
  after(async () => {
    await signer?.stop();
  });

  const solanaWallet = () => signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
  const attest = (w: { wallet_key_ref: string; address: string }, n = nonce(), address = w.address) =>
    signer.client.call('attest_wallet_policy', {
      address,
      wallet_key: { account_key_ref: account, wallet_key_ref: w.wallet_key_ref },
      nonce: n,
    });

  it('verifies under the wallet address over off-chain message bytes; a withheld version 2 leaves it at version 1', async () => {
    const w = await solanaWallet();
    const first = nonce();
    const before = await attest(w, first);
    assert.equal(before.scheme, 'solana_offchain');
    assert.deepEqual(before.statement.split('\n').slice(0, 6), [
      'Treasury signer policy receipt v1',
      `wallet: ${w.address}`,
      'version: none',
      'policy_hash: none',
      'issued_at: none',
      `authority: owner ${owner.address}`,
    ]);
    assert.equal(before.statement.split('\n')[7], `nonce: ${first}`);

    // The bytes signed: rebuilt from the statement and the address alone, in the off-chain signing domain.
    const message = receiptMessage(before.statement, w.address);
    assert.deepEqual(message, policyReceiptMessage(before.statement, w.address), "the signer's bytes, rebuilt");
    assert.deepEqual(Buffer.from(message.subarray(0, 16)), SIGNING_DOMAIN);
    const label = new TextEncoder().encode(POLICY_RECEIPT_APPLICATION_LABEL);
    assert.equal(POLICY_RECEIPT_APPLICATION_DOMAIN, getBase58Decoder().decode(sha256(label)));
    const decoded = getOffchainMessageDecoder().decode(message);
    assert.equal(decoded.version, 0);
    assert.equal(decoded.applicationDomain, POLICY_RECEIPT_APPLICATION_DOMAIN);
    assert.deepEqual(
      decoded.requiredSignatories.map((s) => s.address),
      [w.address],
    );
    assert.equal(decoded.content.text, before.statement);
    const signature = Uint8Array.from(getBase58Encoder().encode(before.signature));
    const publicKey = Uint8Array.from(getAddressEncoder().encode(w.address as Address));
    assert.ok(ed25519.verify(signature, message, publicKey, { zip215: false }));
    // The standard's own verifier agrees (WebCrypto Ed25519 over the same envelope).
    await verifyOffchainMessageEnvelope({
      content: message as unknown as OffchainMessageBytes,
      signatures: { [w.address as Address]: signature as SignatureBytes },
    });

    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '50' }, 1));
    // Version 2 is signed by the owner but never reaches the signer (a front that withholds it).
    const withheld = await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 2);
    const held = await signer.client.call('get_wallet_policy', { address: w.address });
    const n = nonce();
    const after = await attest(w, n);
    const facts = await verifyReceipt(after, w.address, n);
    assert.deepEqual(
      [facts.wallet, facts.version, facts.policy_hash, facts.issued_at, facts.nonce],
      [w.address, 1, held.current!.policy_hash.toLowerCase(), held.current!.issued_at, n],
    );
    assert.equal(receiptStatus(facts, { version: 1, policy_hash: held.current!.policy_hash }), 'in_force');
    assert.equal(receiptStatus(facts, { version: withheld.version, policy_hash: '0x' + 'ab'.repeat(32) }), 'withheld');
  });

  it("fails the owner's check for another nonce, an edited statement, another wallet, or another scheme", async () => {
    const w = await solanaWallet();
    const other = await solanaWallet();
    const n = nonce();
    const receipt = await attest(w, n);
    assert.equal(await reason(verifyReceipt(receipt, w.address, n)), 'verified');
    assert.equal(await reason(verifyReceipt(receipt, w.address, nonce())), 'nonce');
    const edited = { ...receipt, statement: receipt.statement.replace('version: none', 'version: 7') };
    assert.notEqual(edited.statement, receipt.statement);
    assert.equal(await reason(verifyReceipt(edited, w.address, n)), 'signature');
    const renonced = { ...receipt, statement: receipt.statement.replace(n, nonce()) };
    assert.equal(await reason(verifyReceipt(renonced, w.address, n)), 'signature');
    assert.equal(await reason(verifyReceipt(receipt, other.address, n)), 'signature');
    assert.equal(await reason(verifyReceipt({ ...receipt, scheme: 'eip191' }, w.address, n)), 'scheme');
    // The bytes of an edited statement are not what the key signed.
    const signature = Uint8Array.from(getBase58Encoder().encode(receipt.signature));
    const publicKey = Uint8Array.from(getAddressEncoder().encode(w.address as Address));
    assert.equal(
      ed25519.verify(signature, receiptMessage(edited.statement, w.address), publicKey, { zip215: false }),
      false,
    );
  });

  it('answers only for a Solana wallet whose key it holds, with that key; a destroyed key signs none', async () => {
    const w = await solanaWallet();
    const madeUp = getAddressDecoder().decode(randomBytes(32));
    const unknown = await refusal(attest(w, nonce(), madeUp));
    assert.deepEqual([unknown.code, unknown.details?.rule], ['key_not_found', 'unknown_wallet']);
    const other = await solanaWallet();
    const swapped = await refusal(attest(other, nonce(), w.address));
    assert.equal(swapped.code, 'address_mismatch', 'the key of another wallet does not sign for this one');
    const evm = await walletOps(signer, account).wallet();
    const curve = await refusal(attest(evm, nonce(), w.address));
    assert.deepEqual([curve.code, curve.details?.rule], ['invariant_violation', 'key_curve']);

    const doomed = await solanaWallet();
    await attest(doomed);
    await signer.client.destroyWalletKey({
      account_key_ref: account,
      wallet_key_ref: doomed.wallet_key_ref,
      address: doomed.address,
    });
    const destroyed = await refusal(attest(doomed));
    assert.equal(destroyed.code, 'key_destroyed');
  });

  it("counts each receipt in the wallet's receipt ceilings, given back when it does not leave", async () => {
    const w = await solanaWallet();
    const other = await solanaWallet();
    // Signed by another wallet's key for this address: refused, and its count given back.
    for (let i = 0; i < 2; i++)
      assert.equal((await refusal(attest(other, nonce(), w.address))).code, 'address_mismatch');
    for (let i = 0; i < 3; i++) await attest(w);
    const r = await refusal(attest(w));
    assert.deepEqual([r.code, r.details?.limit], ['limit_exceeded', 'wallet_receipts_minute']);
  });
});
