/**
 * `npm run hsm:qualify` (ops/hsm/qualify.ts, docs/deploy-hsm.md) as a vendor runs it, against SoftHSM tokens:
 * a full token qualifies (exit 0, every row passes) and the KeyBackend contract runs against it; a token whose
 * configuration offers no Ed25519 and no key wrap fails (exit 1) with those rows failed; bad arguments exit 2
 * and a PIN file others can read is refused. The PIN never appears in the output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import { initSoftHsmToken, type SoftHsmToken } from '../../../ops/softhsm/init-token.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The labels of the token's secret keys (read in this process, with the token's own configuration). */
function secretKeyLabels(token: SoftHsmToken, pin: string): string[] {
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = token.softhsm2Conf;
  const p11 = new pkcs11js.PKCS11();
  p11.load(token.modulePath);
  p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  try {
    const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === token.tokenLabel)!;
    const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    p11.C_Login(session, pkcs11js.CKU_USER, pin);
    p11.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY }]);
    const labels: string[] = [];
    for (let h = p11.C_FindObjects(session); h; h = p11.C_FindObjects(session))
      labels.push(String(p11.C_GetAttributeValue(session, h, [{ type: pkcs11js.CKA_LABEL }])[0]?.value ?? ''));
    p11.C_FindObjectsFinal(session);
    return labels;
  } finally {
    p11.C_Finalize();
    p11.close();
    if (previous === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previous;
  }
}

function qualify(conf: string, args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'ops/hsm/qualify.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, SOFTHSM2_CONF: conf },
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: run.status, out: run.stdout, err: run.stderr };
}

describe('npm run hsm:qualify', function () {
  this.timeout(300_000);
  let dir: string;
  let token: SoftHsmToken;
  let pin: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-qualify-cmd-'));
    token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
    pin = fs.readFileSync(token.pinFile, 'utf8').trim();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const base = () => ['--module', token.modulePath, '--token-label', token.tokenLabel, '--pin-file', token.pinFile];

  it('qualifies a full SoftHSM token, the KeyBackend contract included, and leaves no KEK of its own behind', () => {
    const run = qualify(token.softhsm2Conf, base());
    assert.equal(run.status, 0, run.out + run.err);
    assert.match(run.out, /\| secp256k1 \| mechanism CKM_ECDSA \| pass \|/);
    assert.match(run.out, /\| ed25519 \| sign a message \(CKM_EDDSA\) that verifies \| pass \|/);
    assert.match(run.out, /\| contract \| signs 1,000 digests[^|]*\| pass \|/);
    assert.match(run.out, /- ed25519: qualifies/);
    assert.match(run.out, /KeyBackend contract: \d+ of \d+ passed or skipped, 0 failed/);
    assert.doesNotMatch(run.out + run.err, new RegExp(pin));
    const labels = secretKeyLabels(token, pin);
    assert.ok(labels.includes(token.kekLabel), labels.join(', '));
    assert.deepEqual(
      labels.filter((l) => l.startsWith('treasury-qualify-')),
      [],
      'the run destroyed the KEK it made',
    );
  });

  it('fails a token without Ed25519 and key wrap, naming the rows', () => {
    const conf = path.join(dir, 'softhsm', 'offering.conf');
    fs.writeFileSync(
      conf,
      `${fs.readFileSync(token.softhsm2Conf, 'utf8')}slots.mechanisms = CKM_AES_KEY_GEN,CKM_EC_KEY_PAIR_GEN,CKM_ECDSA\n`,
    );
    const run = qualify(conf, base());
    assert.equal(run.status, 1, run.out + run.err);
    assert.match(run.out, /\| key_hierarchy \| mechanism CKM_AES_KEY_WRAP_PAD \| \*\*FAIL\*\* \| not listed \|/);
    assert.match(run.out, /\| ed25519 \| mechanism CKM_EDDSA \| \*\*FAIL\*\* \| not listed \|/);
    assert.match(run.out, /- key_hierarchy: does NOT qualify/);
    assert.match(run.out, /\| contract \| KeyBackend contract \| skipped \|/);
  });

  it('refuses bad arguments (exit 2) and a PIN file others can read', () => {
    assert.equal(qualify(token.softhsm2Conf, ['--module', token.modulePath]).status, 2);
    const open = path.join(dir, 'open.pin');
    fs.writeFileSync(open, pin, { mode: 0o644 });
    fs.chmodSync(open, 0o644);
    const run = qualify(token.softhsm2Conf, [
      '--module',
      token.modulePath,
      '--token-label',
      token.tokenLabel,
      '--pin-file',
      open,
    ]);
    assert.equal(run.status, 2);
    assert.match(run.err, /readable or writable by other users/);
    assert.doesNotMatch(run.out + run.err, new RegExp(pin));
  });
});
