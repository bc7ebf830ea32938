/**
 * `TREASURY_SANDBOX_KEY_BACKEND=aws-kms npm start`: the whole sandbox with the signer on the AWS KMS key
 * backend against the KMS emulator (a test double) instead of SoftHSM. sandbox.json says
 * `key_backend: "aws-kms"` and where the emulator listens; a new wallet's key is created in the emulator
 * (CreateKey, CreateAlias, GetPublicKey seen there), a payment to the demo seller is signed by KMS Sign
 * and settles on the sandbox chain, the emulator is reachable for fault injection while it runs, and it
 * stops with the sandbox. Without the variable, sandbox.json says `key_backend: "pkcs11"`
 * (sandbox-start.test.ts runs that path).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { decodeSettlementReceipt } from '../../src/x402/header-codec.js';
import { payDemoSeller, startSandbox } from '../support/sandbox-harness.js';

describe('npm start with TREASURY_SANDBOX_KEY_BACKEND=aws-kms (signer on the KMS emulator)', function () {
  this.timeout(240_000);

  it('signs a payment to the demo seller with a KMS key in the emulator; sandbox.json names the backend and endpoint', async () => {
    const running = await startSandbox({ TREASURY_SANDBOX_KEY_BACKEND: 'aws-kms', TREASURY_SANDBOX_KMS_PORT: '0' });
    const { sandboxFile } = running;
    try {
      const sandbox = running.info;
      const kms = running.info;
      assert.equal(kms.key_backend, 'aws-kms', `${running.output()}\n${running.logs()}`);
      assert.match(kms.kms_endpoint ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(kms.kms_emulator, 'test-double');
      assert.match(running.output(), /key backend {4}: aws-kms on the KMS emulator/);
      const health = await fetch(`${kms.kms_endpoint}/__emulator/health`);
      assert.equal(health.headers.get('x-treasury-kms-emulator'), 'test-double');
      // Keys are made with wallets only: before the first buyer wallet, the one key is the demo seller's
      // collection wallet (a platform_mor seller's, created at start; docs/adr/0011-merchant-of-record.md).
      assert.match(sandbox.demo_seller_collect_to, /^0x[0-9a-fA-F]{40}$/);
      assert.equal(((await health.json()) as { keys: number }).keys, 1, 'no key but the collection wallet’s');

      const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
      const mint = await fetch(`${sandbox.api_url}/v1/treasury`, {
        method: 'POST',
        headers: auth(sandbox.admin_token),
        body: JSON.stringify({ owner_type: 'agent', owner_id: 'kms' }),
      });
      assert.equal(mint.status, 201, await mint.clone().text());
      const { api_key } = (await mint.json()) as { api_key: string };
      const wallet = await fetch(`${sandbox.api_url}/v1/wallets`, {
        method: 'POST',
        headers: auth(api_key),
        body: JSON.stringify({ label: 'kms' }),
      });
      assert.equal(wallet.status, 201, `${await wallet.clone().text()}\n${running.logs()}`);
      const created = (await wallet.json()) as { id: string; address: string };
      const afterWallet = (await (await fetch(`${kms.kms_endpoint}/__emulator/stats`)).json()) as {
        succeeded: Record<string, number>;
        signatures: number;
      };
      assert.ok((afterWallet.succeeded['CreateKey'] ?? 0) >= 1, JSON.stringify(afterWallet));
      assert.ok((afterWallet.succeeded['CreateAlias'] ?? 0) >= 1, JSON.stringify(afterWallet));

      const funded = await fetch(sandbox.faucet_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address: created.address, amount_usd: '1' }),
      });
      assert.equal(funded.status, 200, await funded.clone().text());
      const paid = await payDemoSeller(sandbox, created.id, api_key, () => `\n${running.logs()}`);
      assert.equal(paid.status, 200, await paid.clone().text());
      assert.equal(
        decodeSettlementReceipt(paid.headers.get('payment-response')!).success,
        true,
        'the KMS signature settled on the sandbox chain',
      );
      const afterPay = (await (await fetch(`${kms.kms_endpoint}/__emulator/stats`)).json()) as {
        succeeded: Record<string, number>;
        signatures: number;
      };
      assert.equal(afterPay.signatures - afterWallet.signatures, 1, 'one KMS Sign for one payment');
      assert.equal((await fetch(`${sandbox.api_url}/readyz`)).status, 200);

      await running.stop();
      assert.ok(!fs.existsSync(sandboxFile));
      assert.match(running.output(), /KMS emulator stopped/);
      const gone = await fetch(`${kms.kms_endpoint}/__emulator/health`).then(
        () => false,
        () => true,
      );
      assert.ok(gone, 'the emulator stopped with the sandbox');
    } finally {
      await running.stop();
      fs.rmSync(running.dataDir, { recursive: true, force: true });
    }
  });
});
