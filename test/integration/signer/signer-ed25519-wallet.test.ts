/**
 * `create_wallet_key` with `curve: 'ed25519'` through the signer's socket (a real signer process with its
 * owner-policy store, on the test key backend): the result names the curve, carries the raw 32-byte public
 * key as 0x + 64 hex and its base58 Solana address, and matches the protocol's result schema; an account
 * under an owner's authority gets its EVM and its Solana wallets recorded in the policy store under that
 * authority; a payment names its payee (`pay_to`) when the signer keeps a policy store; an unknown curve is
 * refused at the boundary.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { address, getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { createWalletKeyResultSchema } from '../../../signer/protocol/signer-protocol.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import { ownerAuthority } from './signer-test-helpers.js';

describe('signer: Ed25519 (Solana) wallet keys over the socket', function () {
  this.timeout(120_000);
  let signer: TestSigner;

  before(async () => {
    signer = await startTestSigner({ policyStore: true });
  });
  after(async () => {
    await signer?.stop();
  });

  async function ownedAccount(): Promise<{ account: string; owner: string }> {
    const owner = privateKeyToAccount(generatePrivateKey());
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    return { account: made.account_key_ref, owner: owner.address };
  }

  it('answers the raw public key and its base58 address; the policy store records both wallets under the owner', async () => {
    const { account, owner } = await ownedAccount();
    const solana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
    assert.ok(createWalletKeyResultSchema.safeParse(solana).success);
    assert.ok('curve' in solana && solana.curve === 'ed25519');
    assert.match(solana.public_key, /^0x[0-9a-f]{64}$/);
    assert.equal(solana.address, getBase58Decoder().decode(hexToBytes(solana.public_key as `0x${string}`)));
    assert.deepEqual(solana.policy_authority, { kind: 'owner', address: owner });
    const evm = await signer.client.createWalletKey({ account_key_ref: account, curve: 'secp256k1' });
    assert.match(evm.address, /^0x[0-9a-fA-F]{40}$/);
    assert.deepEqual(evm.policy_authority, { kind: 'owner', address: owner });
    const byDefault = await signer.client.createWalletKey({ account_key_ref: account });
    assert.match(byDefault.address, /^0x[0-9a-fA-F]{40}$/);
  });

  it('signs the x402 exact shape with the HSM or KMS key (the signature verifies), and refuses any other message', async () => {
    const { account } = await ownedAccount();
    const w = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
    const wallet = address(w.address);
    const message = await paymentMessage({ wallet, amount: 10_000n });
    const call = (bytes: Uint8Array, payTo: { pay_to?: string } = { pay_to: PAY_TO }) =>
      signer.client.signSolanaTransaction({
        account_key_ref: account,
        wallet_key_ref: w.wallet_key_ref,
        address: w.address,
        network: DEVNET,
        message: Buffer.from(bytes).toString('base64'),
        ...payTo,
      });
    // With a policy store, the payee must be named: the owner's counterparty rules are checked against it.
    await assert.rejects(
      call(message, {}),
      (e: unknown) =>
        e instanceof SignerError && e.code === 'invariant_violation' && e.details?.rule === 'pay_to_required',
    );
    const signed = await call(message);
    const signature = getBase58Encoder().encode(signed.signature) as Uint8Array;
    assert.ok(
      ed25519.verify(signature, message, hexToBytes(w.public_key as `0x${string}`)),
      'an Ed25519 signature of the exact message bytes by the wallet key',
    );
    // The wallet as its own fee payer: the signer would be paying the network fee and signing a second role.
    const refused = await call(await paymentMessage({ wallet, feePayer: wallet, amount: 10_000n })).then(
      () => assert.fail('signed a message that is not the x402 shape'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof SignerError);
    assert.equal(refused.code, 'invariant_violation');
    assert.equal(typeof refused.details?.rule, 'string');
  });

  it('refuses an unknown curve at the boundary', async () => {
    const account = await signer.client.createAccountKey();
    await assert.rejects(
      signer.client.call('create_wallet_key', { account_key_ref: account.account_key_ref, curve: 'p256' as 'ed25519' }),
      (e: unknown) => e instanceof SignerError && e.code === 'invalid_request',
    );
  });
});
