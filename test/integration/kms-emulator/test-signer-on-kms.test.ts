/**
 * The CI matrix's AWS KMS leg is real: with TREASURY_TEST_KEY_BACKEND=aws-kms the test harness's signer
 * runs on the AWS KMS key backend against the shared KMS emulator (its wallet keys are created, read and
 * used for signing there, none in SoftHSM), and a signer restarted on the same directory signs with the same
 * key. Without the variable the harness's signer stays on SoftHSM and the emulator sees nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedKmsEmulator } from '../../support/kms-test-backend.js';
import { startTestSigner } from '../../support/signer-harness.js';

const DOMAIN = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};

function authorization(from: string, nonce: number) {
  return {
    from,
    to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    value: '1000',
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + 300),
    nonce: `0x${nonce.toString(16).padStart(64, '0')}`,
  };
}

describe('test harness: TREASURY_TEST_KEY_BACKEND selects the signer backend', function () {
  this.timeout(120_000);
  const saved = process.env.TREASURY_TEST_KEY_BACKEND;
  afterEach(() => {
    if (saved === undefined) delete process.env.TREASURY_TEST_KEY_BACKEND;
    else process.env.TREASURY_TEST_KEY_BACKEND = saved;
  });

  it('aws-kms: the signer creates and uses its keys in the shared KMS emulator, and finds them again after a restart', async () => {
    process.env.TREASURY_TEST_KEY_BACKEND = 'aws-kms';
    const kms = await sharedKmsEmulator();
    const before = kms.stats.snapshot();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-kms-'));
    try {
      const signer = await startTestSigner({ dir });
      let account: string;
      let wallet: { wallet_key_ref: string; address: string };
      try {
        assert.equal(signer.keyBackend, 'aws-kms');
        assert.equal(signer.token, undefined);
        account = (await signer.client.createAccountKey()).account_key_ref;
        wallet = await signer.client.createWalletKey({ account_key_ref: account });
        assert.match(wallet.wallet_key_ref, /^kms:v1:wal:/);
        await signer.client.signTransferAuthorization({
          account_key_ref: account,
          wallet_key_ref: wallet.wallet_key_ref,
          address: wallet.address,
          domain: DOMAIN,
          message: authorization(wallet.address, 1),
        });
      } finally {
        await signer.stop();
      }
      const afterFirst = kms.stats.snapshot();
      assert.equal((afterFirst.succeeded['CreateKey'] ?? 0) - (before.succeeded['CreateKey'] ?? 0), 1);
      assert.equal(afterFirst.signatures - before.signatures, 1);
      const restarted = await startTestSigner({ dir });
      try {
        const signed = await restarted.client.signTransferAuthorization({
          account_key_ref: account,
          wallet_key_ref: wallet.wallet_key_ref,
          address: wallet.address,
          domain: DOMAIN,
          message: authorization(wallet.address, 2),
        });
        assert.match(signed.signature, /^0x[0-9a-f]{130}$/);
      } finally {
        await restarted.stop();
      }
      assert.equal(
        kms.stats.snapshot().signatures - before.signatures,
        2,
        'the restarted signer signed in the emulator with the same key',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pkcs11 (unset): the signer is on SoftHSM and the emulator sees no request', async () => {
    delete process.env.TREASURY_TEST_KEY_BACKEND;
    const kms = await sharedKmsEmulator();
    const before = kms.stats.snapshot();
    const signer = await startTestSigner();
    try {
      assert.equal(signer.keyBackend, 'pkcs11');
      assert.ok(signer.token);
      const account = (await signer.client.createAccountKey()).account_key_ref;
      const wallet = await signer.client.createWalletKey({ account_key_ref: account });
      assert.doesNotMatch(wallet.wallet_key_ref, /^kms:/);
    } finally {
      await signer.stop();
    }
    assert.deepEqual(kms.stats.snapshot().received, before.received);
  });
});
