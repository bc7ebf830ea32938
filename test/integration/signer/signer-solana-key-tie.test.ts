/**
 * `sign_solana_transaction` through a real signer process, on each key backend (SoftHSM and the KMS emulator): a
 * wallet key reference is tied to the account before its curve is named. A secp256k1 key of another account is
 * `key_not_found`, as an Ed25519 key of another account is, never `invariant_violation`; the account's own secp256k1
 * key is `invariant_violation` with its rule `key_curve`; nothing is signed, and the account's Ed25519 wallet still
 * signs afterwards.
 */
import assert from 'node:assert/strict';
import { address } from '@solana/kit';
import { signerErrorReplySchema } from '../../../signer/protocol/signer-protocol.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import type { TestKeyBackend } from '../../support/kms-test-backend.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { openRawConnection, type RawConnection } from './signer-test-helpers.js';

for (const keyBackend of ['pkcs11', 'aws-kms'] as const satisfies readonly TestKeyBackend[]) {
  describe(`signer (${keyBackend}): a Solana payment's wallet key is tied to its account before its curve`, function () {
    this.timeout(120_000);
    let signer: TestSigner;
    let conn: RawConnection;
    let account: string;
    let solana: { wallet_key_ref: string; address: string };
    let params: (walletKeyRef: string) => Record<string, unknown>;
    let n = 0;

    /** The error reply to a payment of the account's Solana wallet asked with `walletKeyRef`. */
    async function refusal(walletKeyRef: string) {
      const reply = await conn.request({
        v: 1,
        id: `tie${n++}`,
        method: 'sign_solana_transaction',
        params: params(walletKeyRef),
      });
      const parsed = signerErrorReplySchema.safeParse(reply);
      assert.ok(parsed.success, `not an error reply: ${JSON.stringify(reply).slice(0, 300)}`);
      return parsed.data.error;
    }

    before(async () => {
      signer = await startTestSigner({ keyBackend });
      account = (await signer.client.createAccountKey()).account_key_ref;
      solana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
      const message = Buffer.from(await paymentMessage({ wallet: address(solana.address) })).toString('base64');
      params = (walletKeyRef) => ({
        account_key_ref: account,
        wallet_key_ref: walletKeyRef,
        address: solana.address,
        network: DEVNET,
        message,
        pay_to: PAY_TO,
      });
      conn = openRawConnection(signer.socketPath);
    });
    after(async () => {
      conn?.close();
      await signer?.stop();
    });

    it("answers a secp256k1 key of another account as it answers that account's Ed25519 key: key_not_found", async () => {
      const other = (await signer.client.createAccountKey()).account_key_ref;
      const otherEvm = await signer.client.createWalletKey({ account_key_ref: other, curve: 'secp256k1' });
      const otherSolana = await signer.client.createWalletKey({ account_key_ref: other, curve: 'ed25519' });
      const evmRefusal = await refusal(otherEvm.wallet_key_ref);
      assert.equal(evmRefusal.code, 'key_not_found', `${evmRefusal.code}: ${evmRefusal.message}`);
      assert.equal(evmRefusal.details?.rule, undefined);
      const solanaRefusal = await refusal(otherSolana.wallet_key_ref);
      assert.equal(solanaRefusal.code, 'key_not_found', `${solanaRefusal.code}: ${solanaRefusal.message}`);
      // The other account's keys still serve it: refused above for this account only.
      const signed = await signer.client.call('sign_solana_transaction', {
        ...params(otherSolana.wallet_key_ref),
        account_key_ref: other,
        address: otherSolana.address,
        message: Buffer.from(await paymentMessage({ wallet: address(otherSolana.address) })).toString('base64'),
      } as never);
      assert.match(signed.signature, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    });

    it("names the curve, with its rule, only for the account's own secp256k1 key", async () => {
      const own = await signer.client.createWalletKey({ account_key_ref: account, curve: 'secp256k1' });
      const error = await refusal(own.wallet_key_ref);
      assert.equal(error.code, 'invariant_violation', `${error.code}: ${error.message}`);
      assert.equal(error.details?.rule, 'key_curve');
    });

    it("still signs the account's Solana payment with its Ed25519 key", async () => {
      const reply = await conn.request({
        v: 1,
        id: 'signed',
        method: 'sign_solana_transaction',
        params: params(solana.wallet_key_ref),
      });
      assert.equal(reply.ok, true, JSON.stringify(reply).slice(0, 300));
    });
  });
}
