/**
 * treasury-signer in production mode (`NODE_ENV=production`, as the images set it; signer/config/signer-production-mode.ts),
 * through the real process on a SoftHSM token: it refuses — exit 1, one line naming every variable at fault, never
 * the PIN, never `signer ready` — a PIN taken from the environment (and one under 8 characters), a policy store
 * without a watermark file, no TREASURY_SIGNER_ALLOWED_TOKENS (production names the tokens it signs for; the
 * default is testnet only), and no policy store at all unless TREASURY_SIGNER_OWNER_POLICIES=off says so (then it
 * starts, owner policies off); a sound production configuration (a PIN file of 8+ characters, 0600, a watermark file
 * beside the policy store, the token list named) starts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { startTestSigner, type StartTestSignerOptions } from '../../support/signer-harness.js';

/** Production mode with its token list named (USDC on Base Sepolia, which the tests' payments use). */
const PRODUCTION = {
  NODE_ENV: 'production',
  TREASURY_SIGNER_ALLOWED_TOKENS: '84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};
/** Production mode without a policy store, said on purpose (the refusals below are about something else). */
const NO_STORE = { TREASURY_SIGNER_OWNER_POLICIES: 'off' };
/** The signer started without TREASURY_PKCS11_PIN_FILE (the harness always sets it): the PIN comes from the environment only. */
const WITHOUT_PIN_FILE = nodeArgsFor('signer/main.ts', [
  '--import',
  'data:text/javascript,delete process.env.TREASURY_PKCS11_PIN_FILE',
]);

interface Refusal {
  /** The signer's stderr, as the harness reported it. */
  lines: string[];
  /** The one line's parsed fields. */
  line: { msg: string; err: string; code?: string; problems?: string[] };
}

/** Starts the signer expecting it to refuse: its exit code 1 and its stderr, which must be one JSON line. */
async function refusedStart(options: StartTestSignerOptions): Promise<Refusal> {
  const message = await startTestSigner(options).then(
    async (signer) => {
      const logs = signer.logs();
      await signer.stop();
      return `the signer started:\n${logs}`;
    },
    (err: unknown) => (err as Error).message,
  );
  assert.match(message, /^signer exited with 1 before ready:\n/);
  assert.ok(!message.includes('signer ready'));
  const lines = message.split('\n').slice(1).filter(Boolean);
  assert.equal(lines.length, 1, `one line on stderr:\n${lines.join('\n')}`);
  return { lines, line: JSON.parse(lines[0]!) as Refusal['line'] };
}

describe('treasury-signer in production mode', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-production-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a PIN from the environment (TREASURY_PKCS11_PIN=1234): one line naming it, exit 1, the PIN never printed', async () => {
    const dir = tempDir();
    // The token's user PIN really is 1234: outside production mode this very configuration starts.
    await initSoftHsmToken({ dir: path.join(dir, 'softhsm'), userPin: '1234' });
    const { line } = await refusedStart({
      dir,
      keyBackend: 'pkcs11',
      env: { ...PRODUCTION, ...NO_STORE, TREASURY_PKCS11_PIN: '1234' },
      nodeArgs: WITHOUT_PIN_FILE,
    });
    assert.equal(line.msg, 'signer failed to start');
    assert.equal(line.code, 'config_invalid');
    assert.deepEqual(
      line.problems?.map((p) => p.slice(0, p.indexOf(':'))),
      ['TREASURY_PKCS11_PIN', 'TREASURY_PKCS11_PIN'],
      'the PIN in the environment, and its length',
    );
    assert.match(line.err, /TREASURY_PKCS11_PIN_FILE/, 'says where the PIN must come from');
    assert.match(line.err, /shorter than 8 characters/);
    assert.ok(!JSON.stringify(line).includes('1234'), 'the PIN is never printed');
  });

  it('refuses a policy store without a watermark file (nor a limits state file it would default beside)', async () => {
    const { line } = await refusedStart({ keyBackend: 'pkcs11', policyStore: true, env: PRODUCTION });
    assert.equal(line.code, 'config_invalid');
    assert.deepEqual(
      line.problems?.map((p) => p.slice(0, p.indexOf(':'))),
      ['TREASURY_SIGNER_STORE_WATERMARK_FILE'],
    );
    assert.match(line.err, /TREASURY_SIGNER_DATABASE_URL/);
    assert.ok(!line.err.includes('postgres://'), 'the database URL is never printed');
  });

  it('refuses to start without TREASURY_SIGNER_ALLOWED_TOKENS: one line naming it, exit 1', async () => {
    const { line } = await refusedStart({ keyBackend: 'pkcs11', env: { NODE_ENV: 'production', ...NO_STORE } });
    assert.equal(line.msg, 'signer failed to start');
    assert.equal(line.code, 'config_invalid');
    assert.deepEqual(
      line.problems?.map((p) => p.slice(0, p.indexOf(':'))),
      ['TREASURY_SIGNER_ALLOWED_TOKENS'],
    );
    assert.match(line.err, /8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913/, 'says how to name mainnet USDC');
  });

  it('refuses to start without a policy store unless TREASURY_SIGNER_OWNER_POLICIES=off says so, then starts with them off', async () => {
    const { line } = await refusedStart({ keyBackend: 'pkcs11', env: PRODUCTION });
    assert.equal(line.msg, 'signer failed to start');
    assert.equal(line.code, 'config_invalid');
    assert.deepEqual(
      line.problems?.map((p) => p.slice(0, p.indexOf(':'))),
      ['TREASURY_SIGNER_DATABASE_URL'],
    );
    assert.match(line.err, /TREASURY_SIGNER_OWNER_POLICIES=off/, 'says how to run without one on purpose');

    const signer = await startTestSigner({ keyBackend: 'pkcs11', env: { ...PRODUCTION, ...NO_STORE } });
    try {
      assert.match(signer.logs(), /"msg":"signer ready"/);
      assert.match(signer.logs(), /"owner_policies":"off"/);
    } finally {
      assert.equal(await signer.stop(), 0);
    }
  });

  it('starts on a sound production configuration: a PIN file of 8+ characters (0600) and a watermark file', async () => {
    const dir = tempDir();
    const watermark = path.join(dir, 'store-watermark.json');
    const signer = await startTestSigner({
      dir,
      keyBackend: 'pkcs11',
      policyStore: true,
      env: { ...PRODUCTION, TREASURY_SIGNER_STORE_WATERMARK_FILE: watermark },
    });
    try {
      const pinFile = signer.env.TREASURY_PKCS11_PIN_FILE!;
      assert.equal(fs.statSync(pinFile).mode & 0o777, 0o600);
      assert.ok(fs.readFileSync(pinFile, 'utf8').trim().length >= 8);
      assert.match(signer.logs(), /"msg":"signer ready"/);
      assert.match(signer.logs(), /"owner_policies":"on"/);
      assert.ok(fs.existsSync(watermark), 'the watermark file is kept');
      const created = await signer.client.createAccountKey();
      assert.ok(created.account_key_ref);
    } finally {
      assert.equal(await signer.stop(), 0);
    }
  });
});
