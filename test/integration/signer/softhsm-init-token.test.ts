/**
 * `npm run hsm:init` (ops/softhsm/init-token.ts) initialises the SoftHSM token without putting a PIN in any
 * process's arguments (which every local user can read in the process list): a `softhsm2-util` first on PATH
 * records every argument list it is started with, and the PINs the command wrote to its PIN files appear in
 * none. The token it made has its user PIN set and the root KEK, and a second run changes nothing. With
 * `--pin-dir` (as the images run it) the PINs live there and nowhere under the token's directory, and PIN files an
 * earlier run left beside the token are moved there, still opening the token.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileTempDir } from '../../support/temp-dirs.js';

const INIT = path.resolve('ops/softhsm/init-token.ts');

function showSlots(conf: string): string {
  return spawnSync('softhsm2-util', ['--show-slots'], {
    env: { ...process.env, SOFTHSM2_CONF: conf },
    encoding: 'utf8',
  }).stdout;
}

describe('hsm:init and the PINs', function () {
  this.timeout(120_000);

  it('initialises the token with no PIN in any process argument, idempotently', () => {
    const dir = fileTempDir('treasury-hsm-init-');
    const spy = path.join(dir, 'bin');
    const calls = path.join(dir, 'calls.log');
    fs.mkdirSync(spy);
    const real = spawnSync('sh', ['-c', 'command -v softhsm2-util'], { encoding: 'utf8' }).stdout.trim();
    fs.writeFileSync(
      path.join(spy, 'softhsm2-util'),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    const token = path.join(dir, 'token');
    const env = { ...process.env, PATH: `${spy}:${process.env.PATH ?? ''}` };
    const runInit = () =>
      spawnSync(process.execPath, ['--import', 'tsx', INIT, '--dir', token], { env, encoding: 'utf8' });

    const first = runInit();
    assert.equal(first.status, 0, first.stderr);
    const pins = ['user.pin', 'so.pin'].map((f) => fs.readFileSync(path.join(token, f), 'utf8').trim());
    const argv = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : '';
    for (const pin of pins) assert.ok(pin.length >= 16 && !argv.includes(pin), 'a PIN was in a process argument');

    const conf = JSON.parse(first.stdout) as { softhsm2Conf: string; tokenLabel: string };
    const slots = showSlots(conf.softhsm2Conf);
    assert.match(slots, /Label:\s+treasury\s*\n/);
    assert.match(slots, /Initialized:\s+yes[\s\S]*User PIN init\.:\s+yes/);
    const tokenFiles = fs.readdirSync(path.join(token, 'tokens'));

    const second = runInit();
    assert.equal(second.status, 0, second.stderr);
    assert.deepEqual(fs.readdirSync(path.join(token, 'tokens')), tokenFiles, 'a second run made no new token');
    assert.equal((showSlots(conf.softhsm2Conf).match(/Label:\s+treasury\s*\n/g) ?? []).length, 1);
  });

  it('keeps the PINs in --pin-dir, apart from the token, and moves those an earlier run left beside it', () => {
    const dir = fileTempDir('treasury-hsm-pins-');
    const token = path.join(dir, 'token');
    const pins = path.join(dir, 'pins');
    const runInit = (...extra: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', INIT, '--dir', token, ...extra], { encoding: 'utf8' });
    const pinFilesUnder = (root: string): string[] =>
      (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.pin'));

    // Before the split: the PINs beside the token.
    const legacy = runInit();
    assert.equal(legacy.status, 0, legacy.stderr);
    const userPin = fs.readFileSync(path.join(token, 'user.pin'), 'utf8');

    const split = runInit('--pin-dir', pins);
    assert.equal(split.status, 0, split.stderr);
    assert.deepEqual(pinFilesUnder(token), [], 'no PIN file left under the token directory');
    assert.deepEqual(fs.readdirSync(pins).sort(), ['so.pin', 'user.pin']);
    assert.equal(fs.readFileSync(path.join(pins, 'user.pin'), 'utf8'), userPin, 'the same PIN, moved');
    assert.equal(fs.statSync(pins).mode & 0o777, 0o700);
    for (const f of ['user.pin', 'so.pin']) assert.equal(fs.statSync(path.join(pins, f)).mode & 0o777, 0o600, f);
    assert.equal((JSON.parse(split.stdout) as { pinFile: string }).pinFile, path.join(pins, 'user.pin'));

    // The moved PIN still opens the token: a third run logs in with it to find the KEK.
    const again = runInit('--pin-dir', pins);
    assert.equal(again.status, 0, again.stderr);

    // A new token made with --pin-dir never has a PIN file beside it.
    const fresh = path.join(dir, 'fresh');
    const made = spawnSync(
      process.execPath,
      ['--import', 'tsx', INIT, '--dir', fresh, '--pin-dir', path.join(dir, 'fresh-pins')],
      { encoding: 'utf8' },
    );
    assert.equal(made.status, 0, made.stderr);
    assert.deepEqual(pinFilesUnder(fresh), []);
  });
});
