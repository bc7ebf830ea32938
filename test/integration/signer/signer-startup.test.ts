/**
 * How treasury-signer starts and restarts: it refuses to start (exit 1, clear message, no PIN) without
 * the root KEK, without a readable PIN or with a wrong one; it replaces a stale socket left by a killed
 * run but refuses to replace a regular file; a PIN file other users can read is refused; the socket is
 * 0600, or 0660 when asked (the API as another user of its group); tombstones survive a restart.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { startTestSigner } from '../../support/signer-harness.js';
import { BASE_SEPOLIA_USDC as DOMAIN, buildAuthorization, openRawConnection } from './signer-test-helpers.js';

async function startFailure(env: Record<string, string>, dir?: string): Promise<string> {
  try {
    const signer = await startTestSigner(dir ? { env, dir } : { env });
    await signer.stop();
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('the signer started');
}

describe('treasury-signer start and restart', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-start-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without the root KEK, naming it', async () => {
    const message = await startFailure({ TREASURY_PKCS11_KEK_LABEL: 'no-such-kek' });
    assert.match(message, /exited with 1 before ready/);
    assert.match(message, /root KEK \\"no-such-kek\\" not found on token/);
  });

  it('refuses to start without a readable PIN, or with a wrong one, and never prints a PIN', async () => {
    assert.match(
      await startFailure({ TREASURY_PKCS11_PIN_FILE: '/nonexistent/user.pin' }),
      /cannot read TREASURY_PKCS11_PIN_FILE \(ENOENT\)/,
    );
    const dir = tempDir();
    const wrongPin = path.join(dir, 'wrong.pin');
    fs.writeFileSync(wrongPin, 'wrong-pin-123456\n', { mode: 0o600 });
    const message = await startFailure({ TREASURY_PKCS11_PIN_FILE: wrongPin });
    assert.match(message, /C_Login failed \(CKR 0x000000a0\)/); // CKR_PIN_INCORRECT
    assert.ok(!message.includes('wrong-pin-123456'));
    // A PIN file other users can read (the API's user among them) is refused before it is even read.
    const openPin = path.join(dir, 'open.pin');
    fs.writeFileSync(openPin, 'open-pin-1234567\n', { mode: 0o644 });
    fs.chmodSync(openPin, 0o644);
    const open = await startFailure({ TREASURY_PKCS11_PIN_FILE: openPin });
    assert.match(open, /TREASURY_PKCS11_PIN_FILE is readable or writable by other users \(mode 0644\)/);
    assert.ok(!open.includes('open-pin-1234567'));
    assert.match(await startFailure({ TREASURY_SIGNER_MAX_VALUE: '-5' }), /TREASURY_SIGNER_MAX_VALUE/);
    assert.match(
      await startFailure({ TREASURY_SIGNER_ALLOWED_TOKENS: '84532:0x1234' }),
      /TREASURY_SIGNER_ALLOWED_TOKENS entry/,
    );
  });

  it('refuses two tokens with its label unless TREASURY_PKCS11_TOKEN_SERIAL picks one', async () => {
    const dir = tempDir();
    const first = await startTestSigner({ dir });
    await first.stop();
    // A second token with the same label (and PINs) in the same SoftHSM: an HSM client with two partitions.
    const softhsm = path.join(dir, 'softhsm');
    const env = { ...process.env, SOFTHSM2_CONF: path.join(softhsm, 'softhsm2.conf') };
    const pin = fs.readFileSync(path.join(softhsm, 'user.pin'), 'utf8').trim();
    const soPin = fs.readFileSync(path.join(softhsm, 'so.pin'), 'utf8').trim();
    const init = spawnSync(
      'softhsm2-util',
      ['--init-token', '--free', '--label', first.token!.tokenLabel, '--so-pin', soPin, '--pin', pin],
      { env, encoding: 'utf8' },
    );
    assert.equal(init.status, 0, init.stderr);
    const slots = spawnSync('softhsm2-util', ['--show-slots'], { env, encoding: 'utf8' }).stdout;
    const serials = [...slots.matchAll(/Serial number:\s+([0-9a-f]+)/g)].map((m) => m[1]!);
    assert.equal(serials.length, 2, slots);

    const refused = await startFailure({}, dir);
    assert.match(refused, /2 tokens labelled \\"treasury\\" in this PKCS#11 module \(serials [0-9a-f]+, [0-9a-f]+\)/);
    assert.match(refused, /set TREASURY_PKCS11_TOKEN_SERIAL/);
    assert.match(await startFailure({ TREASURY_PKCS11_TOKEN_SERIAL: 'ffffffff' }, dir), /with serial \\"ffffffff\\"/);
    // The token holding the root KEK (the first one initialised) is picked by its serial and serves.
    let served = 0;
    for (const serial of serials) {
      const message = await startTestSigner({ dir, env: { TREASURY_PKCS11_TOKEN_SERIAL: serial } }).then(
        async (signer) => {
          await signer.client.health();
          await signer.stop();
          return 'served';
        },
        (err: Error) => err.message,
      );
      if (message === 'served') served++;
      else assert.match(message, /root KEK|C_Login/);
    }
    assert.ok(served >= 1, 'a serial selects a token the signer serves from');
  });

  it('replaces a stale socket from a killed run, but never a regular file', async () => {
    const dir = tempDir();
    const socketPath = path.join(dir, 'signer.sock');
    // A process that binds the socket and dies without unlinking it.
    spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    assert.ok(fs.lstatSync(socketPath).isSocket(), 'stale socket in place');
    const signer = await startTestSigner({ dir });
    try {
      assert.equal((await signer.client.health()).status, 'ok');
      assert.equal(fs.statSync(socketPath).mode & 0o777, 0o600);
    } finally {
      assert.equal(await signer.stop(), 0);
    }
    fs.writeFileSync(socketPath, 'precious');
    assert.match(await startFailure({}, dir), /exists and is not a socket/);
    assert.equal(fs.readFileSync(socketPath, 'utf8'), 'precious');
  });

  it('with TREASURY_SIGNER_SOCKET_MODE=0660 opens the socket to its group too (the API as another user), never to others', async () => {
    const signer = await startTestSigner({ env: { TREASURY_SIGNER_SOCKET_MODE: '0660' } });
    try {
      assert.equal(fs.statSync(signer.socketPath).mode & 0o777, 0o660);
      assert.equal((await signer.client.health()).status, 'ok');
    } finally {
      assert.equal(await signer.stop(), 0);
    }
  });

  it('keeps refusing a destroyed wallet key after a restart (tombstones live in the token)', async () => {
    const dir = tempDir();
    let signer = await startTestSigner({ dir });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const doomed = await signer.client.createWalletKey({ account_key_ref: account });
    const kept = await signer.client.createWalletKey({ account_key_ref: account });
    await signer.client.destroyWalletKey({ account_key_ref: account, wallet_key_ref: doomed.wallet_key_ref });
    assert.equal(await signer.stop(), 0);

    signer = await startTestSigner({ dir });
    try {
      const sign = (w: typeof doomed) =>
        signer.client.signTransferAuthorization({
          account_key_ref: account,
          wallet_key_ref: w.wallet_key_ref,
          address: w.address,
          domain: DOMAIN,
          message: buildAuthorization(w.address, 1),
        });
      await assert.rejects(sign(doomed), (e: unknown) => e instanceof SignerError && e.code === 'key_destroyed');
      assert.equal((await sign(kept)).v >= 27, true, 'the account and its other wallets survive the restart');
    } finally {
      assert.equal(await signer.stop(), 0);
    }
  });

  it('answers busy past the queue limit, closes idle connections, and keeps serving', async () => {
    const signer = await startTestSigner({
      env: {
        TREASURY_SIGNER_MAX_QUEUE: '16',
        TREASURY_PKCS11_SESSIONS: '1',
        TREASURY_SIGNER_IDLE_TIMEOUT_SECONDS: '1',
      },
    });
    try {
      const idle = openRawConnection(signer.socketPath);
      const account = (await signer.client.createAccountKey()).account_key_ref;
      const wallet = await signer.client.createWalletKey({ account_key_ref: account });
      const outcomes = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          signer.client
            .signTransferAuthorization({
              account_key_ref: account,
              wallet_key_ref: wallet.wallet_key_ref,
              address: wallet.address,
              domain: DOMAIN,
              message: buildAuthorization(wallet.address, i),
            })
            .then(
              () => 'ok',
              (e: unknown) => (e instanceof SignerError ? e.code : 'other'),
            ),
        ),
      );
      const busy = outcomes.filter((o) => o === 'busy').length;
      assert.ok(busy > 0, 'some requests were refused with busy');
      assert.equal(outcomes.filter((o) => o !== 'busy' && o !== 'ok').length, 0, outcomes.join(','));
      assert.ok(outcomes.filter((o) => o === 'ok').length >= 16);
      assert.equal((await signer.client.health()).status, 'ok');
      assert.ok(await idle.waitClosed(3000), 'idle connection closed after the idle timeout');
    } finally {
      assert.equal(await signer.stop(), 0);
    }
  });
});
