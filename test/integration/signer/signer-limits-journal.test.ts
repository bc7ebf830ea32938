/**
 * The signer's limits state file through a real signer (SoftHSM, its socket): started on a file of the previous
 * version holding 3,000 wallets' windows (what a front that made many wallets sign once each would leave), it
 * saves one more signature by appending that wallet's line — every byte already in the file stays as it was —
 * rather than rewriting every wallet on its event loop; after a kill -9 and a torn last line (a crash in the middle
 * of an append) the next start still counts that signature; a SIGTERM leaves one JSON document holding every wallet.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { WalletLimiter, type WalletLimit } from '../../../signer/limits/wallet-limiter.js';
import { startTestSigner } from '../../support/signer-harness.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { walletOps } from './signer-test-helpers.js';

const HELD = 3_000;
const limits: WalletLimit[] = [
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 250_000_000n },
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 120n },
];

/** Until `file` is longer than `bytes` (the signer saves every second), or fails after a generous while. */
async function grownPast(file: string, bytes: number): Promise<Buffer> {
  for (let i = 0; i < 300; i++) {
    const now = fs.readFileSync(file);
    if (now.length > bytes) return now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`${file} never grew past ${bytes} bytes`);
}

describe('treasury-signer limits state file: a save costs what changed', function () {
  this.timeout(180_000);

  it('appends one line for one signature among 3,000 wallets, survives a kill -9 and a torn line, and stops whole', async () => {
    const dir = fileTempDir('treasury-signer-journal-');
    const stateFile = path.join(dir, 'limits-state.json');
    const front = new WalletLimiter(limits);
    for (let i = 0; i < HELD; i++) front.take('0x' + randomBytes(20).toString('hex'), 1n);
    // The previous version's file: the snapshot as one JSON document, no newline.
    fs.writeFileSync(stateFile, JSON.stringify(front.snapshot()), { mode: 0o600 });
    const env = { TREASURY_SIGNER_LIMITS_STATE_FILE: stateFile };

    let signer = await startTestSigner({ dir, limits: 'signer_defaults', env });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    let ops = walletOps(signer, account);
    const w = await ops.wallet();
    const before = fs.readFileSync(stateFile);
    await ops.sign(w, '100000000');
    const after = await grownPast(stateFile, before.length);
    assert.ok(after.subarray(0, before.length).equals(before), 'every byte already saved stays as it was');
    const appended = after.subarray(before.length).toString('utf8');
    assert.ok(appended.endsWith('\n') && appended.indexOf('\n') === appended.length - 1, 'one line');
    const line = JSON.parse(appended) as { w: string; l: Record<string, unknown> };
    assert.equal(line.w, w.address.toLowerCase());
    assert.ok(after.length - before.length < 1_000, `${after.length - before.length} bytes for one wallet`);

    signer.child.kill('SIGKILL');
    await signer.stop();
    fs.appendFileSync(stateFile, `{"w":"${w.address.toLowerCase()}","l":{"wallet_amo`);
    signer = await startTestSigner({ dir, limits: 'signer_defaults', env });
    try {
      ops = walletOps(signer, account);
      await ops.sign(w, '100000000');
      let refused: unknown;
      await ops.sign(w, '100000000').catch((err: unknown) => (refused = err));
      assert.ok(refused instanceof SignerError && refused.code === 'limit_exceeded', 'the first 100 USDC still counts');
      assert.equal(refused.details?.limit, 'wallet_amount_hour');
    } finally {
      assert.equal(await signer.stop(), 0);
    }
    const document = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { v: number; wallets: Record<string, unknown> };
    assert.equal(document.v, 1);
    assert.equal(Object.keys(document.wallets).length, HELD + 1, 'every wallet, in one JSON document');
  });
});
