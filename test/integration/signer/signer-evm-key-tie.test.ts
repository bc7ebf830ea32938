/**
 * Every signing method through a real signer process, on each key backend (SoftHSM and the KMS emulator), ties a
 * wallet key reference to the requesting account before it says anything about the key: another account's Ed25519
 * key, another account's destroyed secp256k1 key and another account's destroyed Ed25519 key are each refused with
 * the very error body a reference that was never made gets (`key_not_found`, one message, no details) — in
 * sign_transfer_authorization, sign_permit2_witness_transfer, sign_eip2612_permit and sign_solana_transaction — so a
 * caller holding another account's reference learns neither its curve nor whether it was destroyed. The account's
 * own keys still answer what they are: its Ed25519 key `invariant_violation` (rule `key_curve`) in an EVM method, its
 * destroyed key `key_destroyed`; and its live wallet still signs. Destroying another account's destroyed key is
 * `key_not_found` too (not the success a second destroy by its own account is), and all of it holds after a restart
 * (the tombstones name their account: in the token, in the KMS tombstone file).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { address } from '@solana/kit';
import { signerErrorReplySchema } from '../../../signer/protocol/signer-protocol.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import type { TestKeyBackend } from '../../support/kms-test-backend.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import {
  BASE_SEPOLIA_USDC,
  buildAuthorization,
  buildPermit2Transfer,
  openRawConnection,
  PERMIT2_DOMAIN,
  type RawConnection,
} from './signer-test-helpers.js';

const EVM_METHODS = ['sign_transfer_authorization', 'sign_permit2_witness_transfer', 'sign_eip2612_permit'] as const;
type EvmMethod = (typeof EVM_METHODS)[number];
type Method = EvmMethod | 'sign_solana_transaction';

/**
 * A reference of the same shape as `ref` that names no key: one character near its end changed ('0' ↔ '1', a digit
 * of a KMS key id or a base64url character of a PKCS#11 blob that is not its last, so the spelling stays canonical).
 */
function neverMade(ref: string): string {
  const i = ref.length - 5;
  return ref.slice(0, i) + (ref[i] === '0' ? '1' : '0') + ref.slice(i + 1);
}

for (const keyBackend of ['pkcs11', 'aws-kms'] as const satisfies readonly TestKeyBackend[]) {
  describe(`signer (${keyBackend}): a signing method ties a wallet key to its account before it answers about the key`, function () {
    this.timeout(180_000);
    let dir: string;
    let signer: TestSigner;
    let conn: RawConnection;
    let account: string;
    let evm: { wallet_key_ref: string; address: string };
    let solana: { wallet_key_ref: string; address: string };
    let params: Record<Method, (walletKeyRef: string) => Record<string, unknown>>;
    /** References of another account: its live Ed25519 key, its destroyed secp256k1 and Ed25519 keys. */
    let others: Record<'ed25519' | 'destroyedSecp256k1' | 'destroyedEd25519', string>;
    let n = 0;

    /** The error `method` answers for the account's wallet asked with `walletKeyRef`. */
    async function refusal(method: Method, walletKeyRef: string) {
      const reply = await conn.request({ v: 1, id: `tie${n++}`, method, params: params[method](walletKeyRef) });
      const parsed = signerErrorReplySchema.safeParse(reply);
      assert.ok(parsed.success, `${method}: not an error reply: ${JSON.stringify(reply).slice(0, 300)}`);
      return parsed.data.error;
    }

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-key-tie-'));
      signer = await startTestSigner({ keyBackend, dir });
      account = (await signer.client.createAccountKey()).account_key_ref;
      evm = await signer.client.createWalletKey({ account_key_ref: account });
      solana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
      const message = Buffer.from(await paymentMessage({ wallet: address(solana.address) })).toString('base64');
      const evmParams = (walletKeyRef: string) => ({
        account_key_ref: account,
        wallet_key_ref: walletKeyRef,
        address: evm.address,
      });
      params = {
        sign_transfer_authorization: (ref) => ({
          ...evmParams(ref),
          domain: BASE_SEPOLIA_USDC,
          message: buildAuthorization(evm.address, n),
        }),
        sign_permit2_witness_transfer: (ref) => ({
          ...evmParams(ref),
          domain: PERMIT2_DOMAIN,
          message: buildPermit2Transfer(n),
        }),
        sign_eip2612_permit: (ref) => ({
          ...evmParams(ref),
          domain: BASE_SEPOLIA_USDC,
          message: {
            owner: evm.address,
            spender: PERMIT2_DOMAIN.verifyingContract,
            value: '1000',
            nonce: String(n),
            deadline: String(Math.floor(Date.now() / 1000) + 600),
          },
        }),
        sign_solana_transaction: (ref) => ({
          account_key_ref: account,
          wallet_key_ref: ref,
          address: solana.address,
          network: DEVNET,
          message,
          pay_to: PAY_TO,
        }),
      };
      const other = (await signer.client.createAccountKey()).account_key_ref;
      const otherEd25519 = await signer.client.createWalletKey({ account_key_ref: other, curve: 'ed25519' });
      const destroyedSecp256k1 = await signer.client.createWalletKey({ account_key_ref: other });
      const destroyedEd25519 = await signer.client.createWalletKey({ account_key_ref: other, curve: 'ed25519' });
      for (const key of [destroyedSecp256k1, destroyedEd25519])
        await signer.client.destroyWalletKey({ account_key_ref: other, wallet_key_ref: key.wallet_key_ref });
      others = {
        ed25519: otherEd25519.wallet_key_ref,
        destroyedSecp256k1: destroyedSecp256k1.wallet_key_ref,
        destroyedEd25519: destroyedEd25519.wallet_key_ref,
      };
      conn = openRawConnection(signer.socketPath);
    });
    after(async () => {
      conn?.close();
      await signer?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    for (const method of [...EVM_METHODS, 'sign_solana_transaction'] as const) {
      it(`${method}: another account's Ed25519 key and its destroyed keys answer as a key never made`, async () => {
        const own = method === 'sign_solana_transaction' ? solana : evm;
        const unknown = await refusal(method, neverMade(own.wallet_key_ref));
        assert.equal(unknown.code, 'key_not_found', `${unknown.code}: ${unknown.message}`);
        for (const [name, ref] of Object.entries(others)) {
          assert.deepEqual(await refusal(method, ref), unknown, `${method}, another account's ${name} key`);
        }
      });
    }

    for (const method of EVM_METHODS) {
      it(`${method}: the account's own Ed25519 key names its curve, with its rule`, async () => {
        const error = await refusal(method, solana.wallet_key_ref);
        assert.equal(error.code, 'invariant_violation', `${error.code}: ${error.message}`);
        assert.equal(error.details?.rule, 'key_curve');
      });
    }

    it("the account's own destroyed keys are key_destroyed, its live wallet still signs", async () => {
      const reply = await conn.request({
        v: 1,
        id: 'signed',
        method: 'sign_transfer_authorization',
        params: params.sign_transfer_authorization(evm.wallet_key_ref),
      });
      assert.equal(reply.ok, true, JSON.stringify(reply).slice(0, 300));
      const ownEvm = await signer.client.createWalletKey({ account_key_ref: account });
      const ownSolana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
      for (const key of [ownEvm, ownSolana])
        await signer.client.destroyWalletKey({ account_key_ref: account, wallet_key_ref: key.wallet_key_ref });
      for (const method of [...EVM_METHODS, 'sign_solana_transaction'] as const) {
        for (const key of [ownEvm, ownSolana]) {
          const error = await refusal(method, key.wallet_key_ref);
          assert.equal(error.code, 'key_destroyed', `${method}: ${error.code}: ${error.message}`);
        }
      }
    });

    it("after a restart, still: another account's destroyed key is a key never made, also to destroy_wallet_key", async () => {
      conn.close();
      await signer.stop();
      signer = await startTestSigner({ keyBackend, dir });
      conn = openRawConnection(signer.socketPath);
      for (const method of [...EVM_METHODS, 'sign_solana_transaction'] as const) {
        const unknown = await refusal(method, neverMade(evm.wallet_key_ref));
        for (const ref of [others.destroyedSecp256k1, others.destroyedEd25519])
          assert.deepEqual(await refusal(method, ref), unknown, `${method}: ${ref.slice(0, 16)}…`);
      }
      for (const ref of [others.destroyedSecp256k1, others.destroyedEd25519]) {
        const reply = await conn.request({
          v: 1,
          id: `destroy${n++}`,
          method: 'destroy_wallet_key',
          params: { account_key_ref: account, wallet_key_ref: ref },
        });
        assert.equal(reply.error?.code, 'key_not_found', JSON.stringify(reply).slice(0, 300));
      }
    });
  });
}
