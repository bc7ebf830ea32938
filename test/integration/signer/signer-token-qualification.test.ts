/**
 * The signer knows whether its HSM can do the job (docs/deploy-hsm.md): on a token that lacks what it needs
 * it refuses to start, naming what is missing, instead of saying "ready" and answering every request "retry
 * shortly"; on a token without Ed25519 it starts and refuses Solana keys with the permanent `hsm_unsupported`,
 * which the front answers 500 with no Retry-After. The tokens are SoftHSM tokens whose configuration offers
 * only some mechanisms (`slots.mechanisms`), through a real signer process.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { SignerClient, SignerError } from '../../../signer/protocol/signer-client.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { SignerGateway } from '../../../src/api/signing/signer-gateway.js';
import { startTestSigner } from '../../support/signer-harness.js';

const HIERARCHY = ['CKM_AES_KEY_GEN', 'CKM_AES_KEY_WRAP_PAD'];
const SECP256K1 = ['CKM_EC_KEY_PAIR_GEN', 'CKM_ECDSA'];
const ED25519 = ['CKM_EC_EDWARDS_KEY_PAIR_GEN', 'CKM_EDDSA'];

/** A token in a fresh directory, and a SoftHSM configuration of it offering only `mechanisms`. */
async function tokenOffering(mechanisms: string[]): Promise<{ dir: string; conf: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-qualify-'));
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  const conf = path.join(dir, 'softhsm', 'offering.conf');
  fs.writeFileSync(conf, `${fs.readFileSync(token.softhsm2Conf, 'utf8')}slots.mechanisms = ${mechanisms.join(',')}\n`, {
    mode: 0o600,
  });
  return { dir, conf };
}

describe('the signer qualifies its PKCS#11 token at start', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start on a token without ECDSA, naming what is missing', async () => {
    const { dir, conf } = await tokenOffering([...HIERARCHY, 'CKM_EC_KEY_PAIR_GEN', ...ED25519]);
    dirs.push(dir);
    await assert.rejects(
      startTestSigner({ dir, env: { SOFTHSM2_CONF: conf }, policyStore: false, readyTimeoutMs: 60_000 }),
      (err: Error) => {
        assert.match(err.message, /exited with 1 before ready/);
        assert.match(err.message, /hsm_unsupported|cannot hold the signer's keys/);
        assert.match(err.message, /CKM_ECDSA \(absent\)/);
        return true;
      },
    );
  });

  it('refuses to start on a token that cannot wrap keys', async () => {
    const { dir, conf } = await tokenOffering(['CKM_AES_KEY_GEN', ...SECP256K1, ...ED25519]);
    dirs.push(dir);
    await assert.rejects(
      startTestSigner({ dir, env: { SOFTHSM2_CONF: conf }, policyStore: false, readyTimeoutMs: 60_000 }),
      /CKM_AES_KEY_WRAP_PAD \(absent\)/,
    );
  });

  it('starts without Ed25519, serves EVM wallets, and refuses Solana keys as permanent (front: 500, no Retry-After)', async () => {
    const { dir, conf } = await tokenOffering([...HIERARCHY, ...SECP256K1]);
    dirs.push(dir);
    const signer = await startTestSigner({ dir, env: { SOFTHSM2_CONF: conf }, policyStore: false });
    try {
      const account = await signer.client.call('create_account_key', {});
      const evm = await signer.client.createWalletKey({ account_key_ref: account.account_key_ref });
      assert.match(evm.address, /^0x[0-9a-fA-F]{40}$/);
      await assert.rejects(
        signer.client.createWalletKey({ account_key_ref: account.account_key_ref, curve: 'ed25519' }),
        (err: unknown) => {
          assert.ok(err instanceof SignerError);
          assert.equal(err.code, 'hsm_unsupported');
          assert.match(err.message, /CKM_EDDSA/);
          return true;
        },
      );
      const gateway = new SignerGateway(
        new SignerClient({ socketPath: signer.socketPath, timeoutMs: 10_000 }),
        createTreasuryMetrics(),
      );
      await assert.rejects(
        gateway.call('create_wallet_key', { account_key_ref: account.account_key_ref, curve: 'ed25519' }),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.code, 'hsm_unsupported');
          assert.equal(err.status, 500);
          assert.equal(err.headers['Retry-After'], undefined);
          return true;
        },
      );
    } finally {
      await signer.stop();
    }
  });
});
