/**
 * The CLI keystore and derivations: a sealed phrase opens only with its passphrase; a changed header,
 * nonce or ciphertext fails to open (authenticated); the file never holds the phrase in the clear; the
 * BIP44 Base address and the SLIP-0010 Solana address of a phrase are stable and of the right shape.
 */
import assert from 'node:assert/strict';
import { base58 } from '@scure/base';
import {
  addressesFor,
  checkMnemonic,
  evmAccount,
  newMnemonic,
  solanaAddress,
} from '../../../src/cli/commands/account/hd-addresses.js';
import { keystoreSchema, openMnemonic, sealMnemonic } from '../../../src/cli/commands/account/seed-keystore.js';
import { CliError } from '../../../src/cli/core/cli-error.js';

const PHRASE = 'test test test test test test test test test test test junk';

describe('xx keystore and derivations', () => {
  before(() => {
    process.env.XX_KEYSTORE_SCRYPT_LOG_N = '10';
  });
  after(() => {
    delete process.env.XX_KEYSTORE_SCRYPT_LOG_N;
  });

  it('seals and opens; the wrong passphrase or any tampering is wrong_passphrase; no plaintext in the file', async () => {
    const sealed = await sealMnemonic(PHRASE, 'a long passphrase', 'default', addressesFor(PHRASE, 'both'));
    assert.equal(await openMnemonic(sealed, 'a long passphrase'), PHRASE);
    assert.ok(!JSON.stringify(sealed).includes('junk'));
    const refused = (err: unknown) => err instanceof CliError && err.code === 'wrong_passphrase';
    await assert.rejects(openMnemonic(sealed, 'another passphrase'), refused);
    await assert.rejects(openMnemonic({ ...sealed, name: 'renamed' }, 'a long passphrase'), refused);
    const flip = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    await assert.rejects(
      openMnemonic({ ...sealed, ciphertext: flip(sealed.ciphertext) }, 'a long passphrase'),
      refused,
    );
    await assert.rejects(
      openMnemonic({ ...sealed, cipher: { ...sealed.cipher, nonce: flip(sealed.cipher.nonce) } }, 'a long passphrase'),
      refused,
    );
    await assert.rejects(
      sealMnemonic(PHRASE, 'short', 'default', {}),
      (err: unknown) => err instanceof CliError && err.code === 'weak_passphrase',
    );
  });

  it('a lowered scrypt cost is refused under XX_ENV=prod and preprod (exit 2), and taken in the other envs', async () => {
    try {
      for (const env of ['prod', 'preprod']) {
        process.env.XX_ENV = env;
        await assert.rejects(
          sealMnemonic(PHRASE, 'a long passphrase', 'default', {}),
          (err: unknown) =>
            err instanceof CliError &&
            err.code === 'invalid_env' &&
            err.exitCode === 2 &&
            /XX_ENV=/.test(err.userMessage),
          env,
        );
      }
      process.env.XX_ENV = 'qa';
      assert.equal((await sealMnemonic(PHRASE, 'a long passphrase', 'default', {})).kdf.log_n, 10);
    } finally {
      delete process.env.XX_ENV;
    }
  });

  it('a scrypt cost past 2^20 (more memory than the derivation may take) is invalid_env when asked for and refused in a file', async () => {
    for (const logN of ['21', '22']) {
      process.env.XX_KEYSTORE_SCRYPT_LOG_N = logN;
      try {
        await assert.rejects(
          sealMnemonic(PHRASE, 'a long passphrase', 'default', {}),
          (err: unknown) => err instanceof CliError && err.code === 'invalid_env' && err.exitCode === 2,
          logN,
        );
      } finally {
        process.env.XX_KEYSTORE_SCRYPT_LOG_N = '10';
      }
    }
    const sealed = await sealMnemonic(PHRASE, 'a long passphrase', 'default', {});
    assert.ok(keystoreSchema.safeParse(sealed).success);
    assert.ok(!keystoreSchema.safeParse({ ...sealed, kdf: { ...sealed.kdf, log_n: 21 } }).success);
  });

  it('derives the BIP44 address of a known phrase, a 32-byte ed25519 Solana key, and refuses a bad phrase with exit 2', () => {
    assert.equal(evmAccount(PHRASE).address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    assert.equal(evmAccount(PHRASE, 1).address, '0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    const sol = solanaAddress(PHRASE);
    assert.equal(base58.decode(sol).length, 32);
    assert.equal(solanaAddress(PHRASE), sol);
    assert.notEqual(solanaAddress(PHRASE, 1), sol);
    assert.deepEqual(Object.keys(addressesFor(PHRASE, 'base')), ['base']);
    assert.equal(newMnemonic(12).split(' ').length, 12);
    assert.equal(checkMnemonic(`  ${PHRASE.toUpperCase()} `), PHRASE);
    assert.throws(
      () => checkMnemonic('test test test'),
      (err: unknown) => err instanceof CliError && err.exitCode === 2,
    );
  });
});
