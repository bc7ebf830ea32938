/**
 * verifyEd25519Strict (src/shared/verify-ed25519-strict.ts): a real signature verifies; the small-order keys anyone
 * can "sign" for — the all-zero address and the identity point, with R = identity and S = 0 — verify any message
 * under noble's lenient default (ZIP-215) and never here; nor does a key whose y is not below the field's prime,
 * a signature or key of the wrong length, or a signature over other bytes.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { verifyEd25519Strict } from '../../../src/shared/verify-ed25519-strict.js';

const message = new TextEncoder().encode('Treasury: payments to … are revenue of seller sel_x.');
/** The identity point's encoding (y = 1): order 1. */
const IDENTITY = new Uint8Array(32);
IDENTITY[0] = 1;
/** All-zero bytes (y = 0): a point of order 4, the Solana address 111…1. */
const ZEROS = new Uint8Array(32);
/** R = identity, S = 0: verifies for a small-order key under ZIP-215 rules, whatever the message. */
const FORGED = new Uint8Array(64);
FORGED[0] = 1;

describe('verifyEd25519Strict', () => {
  it('verifies a real signature over the exact bytes, and nothing else', () => {
    const secret = ed25519.utils.randomSecretKey();
    const publicKey = ed25519.getPublicKey(secret);
    const signature = ed25519.sign(message, secret);
    assert.equal(verifyEd25519Strict(signature, message, publicKey), true);
    assert.equal(verifyEd25519Strict(signature, message.subarray(1), publicKey), false, 'other bytes');
    assert.equal(verifyEd25519Strict(signature, message, ed25519.getPublicKey(ed25519.utils.randomSecretKey())), false);
    assert.equal(verifyEd25519Strict(signature.subarray(0, 63), message, publicKey), false, '63-byte signature');
    assert.equal(verifyEd25519Strict(signature, message, publicKey.subarray(0, 31)), false, '31-byte key');
  });

  it('refuses the small-order keys that noble’s default accepts with a signature anyone can make', () => {
    assert.equal(base58.encode(ZEROS), '11111111111111111111111111111111');
    assert.equal(base58.encode(IDENTITY), '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM');
    assert.equal(
      base58.encode(FORGED),
      '2AFv15MNPuA84RmU66xw2uMzGipcVxNpzAffoacGVvjFue3CBmf633fAWuiP9cwL9C3z3CJiGgRSFjJfeEcA6QX',
    );
    for (const publicKey of [ZEROS, IDENTITY]) {
      assert.equal(ed25519.verify(FORGED, message, publicKey), true, 'the lenient default accepts it');
      assert.equal(verifyEd25519Strict(FORGED, message, publicKey), false);
    }
  });

  it('refuses a key whose y is not below the field prime (a non-canonical encoding)', () => {
    // y = p + 1 = 2^255 - 18: the identity point spelled out of range, accepted by ZIP-215 decoding only.
    const outOfRange = new Uint8Array(32).fill(0xff);
    outOfRange[0] = 0xee;
    outOfRange[31] = 0x7f;
    assert.ok(ed25519.Point.fromBytes(outOfRange, true), 'decodes under ZIP-215');
    assert.throws(() => ed25519.Point.fromBytes(outOfRange, false));
    assert.equal(verifyEd25519Strict(FORGED, message, outOfRange), false);
  });
});
