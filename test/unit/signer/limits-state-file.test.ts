/**
 * The signer's limits state file (signer/limits/limits-state-file.ts), on a temporary folder: what it writes it
 * reads back, for an EVM wallet (0x, lower-case) and a Solana wallet (its base58 address, kept as spelled) alike,
 * and a limiter restored from it still refuses what the saved windows hold; a snapshot whose wallet key is
 * neither is never written (the previous file stays, no temporary file is left), and a file holding one is
 * refused at read; a symlink planted at its temporary path is never followed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressDecoder } from '@solana/kit';
import { LimitsStateFileError, readLimitsState, writeLimitsState } from '../../../signer/limits/limits-state-file.js';
import { WalletLimiter, type LimiterSnapshot, type WalletLimit } from '../../../signer/limits/wallet-limiter.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const EVM = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const SOLANA = getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const limits: WalletLimit[] = [
  { name: 'wallet_signatures_minute', measure: 'signatures', windowSeconds: 60, max: 2n },
  { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: 1000n },
];

describe('signer limits state file', () => {
  const clock = { now: 1_800_000_000_000 };
  const stateFile = () => path.join(fileTempDir('treasury-limits-state-'), 'limits-state.json');
  const refusedAs = (code: string) => (e: unknown) => e instanceof LimitsStateFileError && e.code === code;

  it("reads back what it wrote, an EVM wallet's and a Solana wallet's (base58) windows alike", () => {
    const file = stateFile();
    const limiter = new WalletLimiter(limits, () => clock.now);
    assert.equal(limiter.take(EVM, 10n).ok, true);
    assert.equal(limiter.take(SOLANA, 400n).ok, true);
    assert.equal(limiter.take(SOLANA, 400n).ok, true);
    const snapshot = limiter.snapshot();
    assert.deepEqual(Object.keys(snapshot.wallets).sort(), [EVM.toLowerCase(), SOLANA].sort());

    writeLimitsState(file, snapshot);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const read = readLimitsState(file);
    assert.deepEqual(read, JSON.parse(JSON.stringify(snapshot)));

    const restored = new WalletLimiter(limits, () => clock.now);
    restored.restore(read!);
    const refused = restored.take(SOLANA, 1n);
    assert.equal(refused.ok, false, "the Solana wallet's two signatures of the minute survived the file");
    if (!refused.ok) assert.equal(refused.refusal.limit, 'wallet_signatures_minute');
    assert.equal(restored.take(EVM, 1n).ok, true);
    assert.equal(restored.take(EVM, 1n).ok, false, "the EVM wallet's signature survived too");
  });

  it('never writes a wallet key it could not read back: the previous file stays, no temporary file is left', () => {
    const file = stateFile();
    const good: LimiterSnapshot = { v: 1, wallets: { [SOLANA]: { wallet_signatures_minute: [[1, '1']] } } };
    writeLimitsState(file, good);
    const before = fs.readFileSync(file, 'utf8');
    for (const key of ['z'.repeat(44), EVM, '0xnot-an-address', 'constructor', '']) {
      const bad: LimiterSnapshot = { v: 1, wallets: { [key]: { wallet_signatures_minute: [[1, '1']] } } };
      assert.throws(() => writeLimitsState(file, bad), refusedAs('invalid_snapshot'), key);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), before);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [path.basename(file)]);
  });

  it('refuses at read a file whose wallet key is neither a lower-case 0x address nor a 32-byte base58 address', () => {
    for (const key of ['z'.repeat(44), EVM, '1'.repeat(31), `${SOLANA} `]) {
      const file = stateFile();
      fs.writeFileSync(file, JSON.stringify({ v: 1, wallets: { [key]: {} } }), { mode: 0o600 });
      assert.throws(() => readLimitsState(file), refusedAs('not_a_state_file'), key);
    }
    assert.equal(readLimitsState(path.join(fileTempDir('treasury-limits-state-'), 'absent.json')), undefined);
  });

  it('never follows a symlink planted at its temporary path: the link goes, its target is untouched', () => {
    const file = stateFile();
    const target = path.join(fileTempDir('treasury-limits-victim-'), 'victim');
    fs.writeFileSync(target, 'not yours', { mode: 0o600 });
    fs.symlinkSync(target, `${file}.${process.pid}.tmp`);
    const snapshot: LimiterSnapshot = { v: 1, wallets: { [SOLANA]: { wallet_signatures_minute: [[1, '1']] } } };
    writeLimitsState(file, snapshot);
    assert.equal(fs.readFileSync(target, 'utf8'), 'not yours');
    assert.equal(fs.lstatSync(file).isFile(), true);
    assert.deepEqual(readLimitsState(file), snapshot);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [path.basename(file)]);
  });
});
