/**
 * The signer's production mode through loadSignerConfig (signer/config/signer-production-mode.ts): what it refuses,
 * all of it in one error naming each variable and never the PIN; what it leaves alone — development mode as before,
 * and the AWS KMS backend, which has no PIN. Production mode names its tokens: TREASURY_SIGNER_ALLOWED_TOKENS unset
 * is refused (the default names testnet tokens only).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSignerConfig, SignerConfigError } from '../../../signer/config/signer-config.js';

const SOCKET = { TREASURY_SIGNER_SOCKET: '/tmp/treasury-signer-production.sock' };
/** USDC on Base, named explicitly: what a production signer moving mainnet money is given. */
const BASE_USDC = '8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
/** Production mode with its token list set, so that each test sees the refusal it is about. */
const PRODUCTION = { NODE_ENV: 'production', TREASURY_SIGNER_ALLOWED_TOKENS: BASE_USDC };
const STORE = { TREASURY_SIGNER_DATABASE_URL: 'postgres://signer:db-password@127.0.0.1:5432/signer' };
/** No policy store, said on purpose: production mode refuses a signer without one otherwise. */
const NO_STORE = { TREASURY_SIGNER_OWNER_POLICIES: 'off' };
const KMS = { TREASURY_KEY_BACKEND: 'aws-kms', TREASURY_KMS_REGION: 'eu-west-1' };

/** The variables `env`'s refusal names, in order (each problem begins with its variable). */
function refusedVariables(env: Record<string, string>): string[] {
  let refusal: SignerConfigError | undefined;
  try {
    loadSignerConfig(env);
  } catch (err) {
    assert.ok(err instanceof SignerConfigError, String(err));
    refusal = err;
  }
  assert.ok(refusal, 'refused');
  assert.equal(refusal.code, 'config_invalid');
  for (const secret of ['short-1', '1234', 'db-password']) assert.ok(!refusal.message.includes(secret));
  return refusal.details.problems.map((p) => p.slice(0, p.indexOf(':')));
}

describe('signer production mode (signer/config/signer-production-mode.ts)', () => {
  let dir: string;
  let pinFile: (pin: string) => string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-production-unit-'));
    pinFile = (pin) => {
      const file = path.join(dir, `${pin.length}.pin`);
      fs.writeFileSync(file, pin + '\n', { mode: 0o600 });
      return file;
    };
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('development mode is as before: a 4-character PIN from the environment, a store without a watermark file', () => {
    const config = loadSignerConfig({ ...SOCKET, ...STORE, TREASURY_PKCS11_PIN: '1234' });
    assert.equal(config.ownerPolicies?.watermarkFile, undefined);
    loadSignerConfig({ ...SOCKET, TREASURY_PKCS11_PIN: '1234', NODE_ENV: 'development' });
  });

  it('refuses, in one error, a PIN from the environment, its length, and a store without a watermark file', () => {
    assert.deepEqual(refusedVariables({ ...SOCKET, ...STORE, ...PRODUCTION, TREASURY_PKCS11_PIN: '1234' }), [
      'TREASURY_PKCS11_PIN',
      'TREASURY_PKCS11_PIN',
      'TREASURY_SIGNER_STORE_WATERMARK_FILE',
    ]);
    // A long PIN from the environment is refused all the same.
    assert.deepEqual(
      refusedVariables({
        ...SOCKET,
        ...NO_STORE,
        TREASURY_ENV: 'production',
        TREASURY_SIGNER_ALLOWED_TOKENS: BASE_USDC,
        TREASURY_PKCS11_PIN: 'a-long-enough-pin',
      }),
      ['TREASURY_PKCS11_PIN'],
    );
  });

  it('refuses a PIN file holding fewer than 8 characters', () => {
    assert.deepEqual(
      refusedVariables({ ...SOCKET, ...PRODUCTION, ...NO_STORE, TREASURY_PKCS11_PIN_FILE: pinFile('short-1') }),
      ['TREASURY_PKCS11_PIN_FILE'],
    );
  });

  it('accepts a PIN file of 8+ characters and a store with a watermark file, named or beside the limits state file', () => {
    const production = { ...SOCKET, ...STORE, ...PRODUCTION, TREASURY_PKCS11_PIN_FILE: pinFile('eight-ch') };
    const named = loadSignerConfig({ ...production, TREASURY_SIGNER_STORE_WATERMARK_FILE: path.join(dir, 'w.json') });
    assert.equal(named.ownerPolicies?.watermarkFile, path.join(dir, 'w.json'));
    const beside = loadSignerConfig({
      ...production,
      TREASURY_SIGNER_LIMITS_STATE_FILE: path.join(dir, 'limits.json'),
    });
    assert.equal(beside.ownerPolicies?.watermarkFile, path.join(dir, 'store-watermark.json'));
  });

  it('the AWS KMS backend has no PIN: accepted, with its public endpoint or an https one; the emulator over http is refused', () => {
    assert.equal(loadSignerConfig({ ...SOCKET, ...KMS, ...PRODUCTION, ...NO_STORE }).backend.kind, 'aws-kms');
    loadSignerConfig({
      ...SOCKET,
      ...KMS,
      ...PRODUCTION,
      ...NO_STORE,
      TREASURY_KMS_ENDPOINT: 'https://vpce.example.com',
    });
    assert.deepEqual(
      refusedVariables({
        ...SOCKET,
        ...KMS,
        ...PRODUCTION,
        ...NO_STORE,
        TREASURY_KMS_ENDPOINT: 'http://127.0.0.1:4599',
      }),
      ['TREASURY_KMS_ENDPOINT'],
    );
    // Outside production mode the emulator is reached as before.
    loadSignerConfig({ ...SOCKET, ...KMS, TREASURY_KMS_ENDPOINT: 'http://127.0.0.1:4599' });
  });

  it('refuses an unset TREASURY_SIGNER_ALLOWED_TOKENS (no default token list in production), on either backend', () => {
    const pin = { TREASURY_PKCS11_PIN_FILE: pinFile('eight-ch'), ...NO_STORE };
    assert.deepEqual(refusedVariables({ ...SOCKET, ...pin, NODE_ENV: 'production' }), [
      'TREASURY_SIGNER_ALLOWED_TOKENS',
    ]);
    assert.deepEqual(refusedVariables({ ...SOCKET, ...KMS, ...NO_STORE, TREASURY_ENV: 'production' }), [
      'TREASURY_SIGNER_ALLOWED_TOKENS',
    ]);
    // Set but empty: refused in every mode.
    for (const empty of ['', ' ', ','])
      assert.deepEqual(
        refusedVariables({ ...SOCKET, ...pin, NODE_ENV: 'production', TREASURY_SIGNER_ALLOWED_TOKENS: empty }),
        ['TREASURY_SIGNER_ALLOWED_TOKENS'],
      );
    // Named, it is exactly what is signed for: mainnet USDC on Base, nothing else.
    const named = loadSignerConfig({ ...SOCKET, ...pin, ...PRODUCTION });
    assert.deepEqual(named.invariants.allowedTokens, [
      { chainId: 8453, address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' },
    ]);
    assert.deepEqual(named.invariants.solana.allowedMints, []);
    // Outside production mode the testnet default applies.
    assert.deepEqual(
      loadSignerConfig({ ...SOCKET, ...pin }).invariants.allowedTokens.map((t) => t.chainId),
      [84532],
    );
  });

  it('refuses no policy store unless TREASURY_SIGNER_OWNER_POLICIES=off says so; off beside a store, or on without one, in every mode', () => {
    const pin = { TREASURY_PKCS11_PIN_FILE: pinFile('eight-ch') };
    assert.deepEqual(refusedVariables({ ...SOCKET, ...pin, ...PRODUCTION }), ['TREASURY_SIGNER_DATABASE_URL']);
    assert.deepEqual(refusedVariables({ ...SOCKET, ...KMS, ...PRODUCTION }), ['TREASURY_SIGNER_DATABASE_URL']);
    assert.equal(loadSignerConfig({ ...SOCKET, ...pin, ...PRODUCTION, ...NO_STORE }).ownerPolicies, undefined);
    assert.equal(loadSignerConfig({ ...SOCKET, ...pin }).ownerPolicies, undefined);
    for (const mode of [{}, PRODUCTION]) {
      assert.deepEqual(refusedVariables({ ...SOCKET, ...pin, ...mode, ...STORE, ...NO_STORE }), [
        'TREASURY_SIGNER_OWNER_POLICIES',
      ]);
      assert.deepEqual(refusedVariables({ ...SOCKET, ...pin, ...mode, TREASURY_SIGNER_OWNER_POLICIES: 'on' }), [
        'TREASURY_SIGNER_OWNER_POLICIES',
      ]);
    }
  });
});
