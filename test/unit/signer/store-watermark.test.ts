/**
 * The policy store's watermark file (signer/owner-policy/store-watermark.ts), on a temporary folder: created at the
 * first start, raised to a store another process advanced, never lowered by a late write; a store below it refused
 * (`store_rolled_back`, both numbers) unless the exact acknowledgement names it, which works once; a file that is
 * not one refused; a symlink planted at its temporary path never followed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { StoreLog } from '../../../signer/owner-policy/store-generation.js';
import {
  readStoreWatermark,
  StoreWatermark,
  StoreWatermarkError,
} from '../../../signer/owner-policy/store-watermark.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const warned: string[] = [];
const log: StoreLog = { warn: (_f, message) => warned.push(message), error: () => undefined };
const refusedAs = (code: string, pattern?: RegExp) => (e: unknown) =>
  e instanceof StoreWatermarkError && e.code === code && (!pattern || pattern.test(e.message));

describe("the policy store's watermark file", () => {
  const watermarkFile = () => path.join(fileTempDir('treasury-watermark-'), 'store-watermark.json');
  const open = (file: string, acceptGeneration?: number) => new StoreWatermark({ file, acceptGeneration, log });

  it('is created at the first start, raised after commits and to a store another process advanced, never lowered', async () => {
    const file = watermarkFile();
    const watermark = open(file);
    await watermark.start(7);
    assert.deepEqual(readStoreWatermark(file), { v: 1, generation: 7 });
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    await Promise.all([watermark.raised(9), watermark.raised(8)]);
    assert.equal(readStoreWatermark(file)?.generation, 9);
    await open(file).start(12);
    assert.equal(readStoreWatermark(file)?.generation, 12);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [path.basename(file)]);
  });

  it('refuses a store below it, naming both numbers, unless the exact generation is acknowledged (once)', async () => {
    const file = watermarkFile();
    await open(file).start(10);
    await assert.rejects(
      open(file).start(4),
      refusedAs('store_rolled_back', /Its generation is 4, and TREASURY_SIGNER_STORE_WATERMARK_FILE \S+ holds 10/),
    );
    await assert.rejects(open(file, 5).start(4), refusedAs('store_rolled_back'));
    const accepted = open(file, 4);
    await accepted.start(4);
    assert.deepEqual(readStoreWatermark(file), { v: 1, generation: 4, accepted: 4 });
    assert.match(warned.at(-1)!, /TREASURY_SIGNER_ACCEPT_STORE_GENERATION=4: starting on a policy store older/);
    await accepted.raised(6);
    await assert.rejects(open(file, 4).start(4), refusedAs('store_rolled_back', /was already used once/));
  });

  it('refuses a file that is not one, and never follows a symlink planted at its temporary path', async () => {
    const file = watermarkFile();
    fs.writeFileSync(file, '{"v":1,"generation":-1}');
    await assert.rejects(open(file).start(1), refusedAs('not_a_watermark_file'));
    fs.rmSync(file);
    const target = path.join(fileTempDir('treasury-watermark-victim-'), 'victim');
    fs.writeFileSync(target, 'not yours');
    fs.symlinkSync(target, `${file}.${process.pid}.tmp`);
    await open(file).start(3);
    assert.equal(fs.readFileSync(target, 'utf8'), 'not yours');
    assert.equal(fs.lstatSync(file).isFile(), true);
    assert.equal(readStoreWatermark(file)?.generation, 3);
  });
});
