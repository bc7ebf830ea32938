/**
 * The check every Ed25519 signature passes before it leaves the signer (signer/solana/ed25519-signature.ts):
 * verified by OpenSSL with the key decoded strictly once, it answers as RFC 8032 strict verification
 * (@noble/curves with zip215 off, the check it replaced) on valid signatures and on each way one can be
 * malformed: another message, a flipped bit, another key, `s` + L, a non-canonical R, a public key of small
 * order or spelled past the field's prime, a wrong length — first and again (the key then kept).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { assertEd25519Signature } from '../../../signer/solana/ed25519-signature.js';
import { SignerFault } from '../../../signer/signer-error.js';

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const le = (n: bigint): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 255n));
const fromLe = (b: Uint8Array): bigint => b.reduceRight((n, byte) => (n << 8n) | BigInt(byte), 0n);

/** Whether the check lets the signature through. */
function passes(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    assertEd25519Signature(signature, message, publicKey);
    return true;
  } catch (err) {
    assert.ok(err instanceof SignerFault && err.code === 'address_mismatch', String(err));
    return false;
  }
}

const strict = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean => {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
};

describe('signer: the Ed25519 check before a signature leaves', () => {
  const secret = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secret);
  const message = randomBytes(220);
  const signature = ed25519.sign(message, secret);
  const identity = le(1n);
  const zeroSignature = new Uint8Array(64);
  zeroSignature[0] = 1; // R = the identity, s = 0: valid for a key of small order under plain RFC 8032

  const flipped = (bytes: Uint8Array, bit: number) => {
    const out = Uint8Array.from(bytes);
    out[bit >> 3]! ^= 1 << (bit & 7);
    return out;
  };
  const sPlusL = Uint8Array.from(signature);
  sPlusL.set(le(fromLe(signature.subarray(32)) + L), 32);
  const nonCanonicalR = new Uint8Array(64);
  nonCanonicalR.set(le(P + 1n)); // the identity spelled y = p + 1

  const cases: Array<[string, Uint8Array, Uint8Array, Uint8Array, boolean]> = [
    ['valid', signature, message, publicKey, true],
    ['another message', signature, randomBytes(220), publicKey, false],
    ['a bit of the message flipped', signature, flipped(message, 77), publicKey, false],
    ['a bit of R flipped', flipped(signature, 9), message, publicKey, false],
    ['a bit of s flipped', flipped(signature, 300), message, publicKey, false],
    ['another key', signature, message, ed25519.getPublicKey(ed25519.utils.randomSecretKey()), false],
    ['s + L', sPlusL, message, publicKey, false],
    ['a non-canonical R', nonCanonicalR, message, identity, false],
    ['a key of small order', zeroSignature, message, identity, false],
    ['a key spelled past the prime', zeroSignature, message, le(P + 1n), false],
    ['a short signature', signature.subarray(0, 63), message, publicKey, false],
    ['a long signature', Uint8Array.from([...signature, 0]), message, publicKey, false],
    ['a short key', signature, message, publicKey.subarray(0, 31), false],
  ];

  for (const [name, sig, msg, key, expected] of cases) {
    it(`${expected ? 'passes' : 'refuses'} ${name}, as strict verification does, first and again`, () => {
      assert.equal(strict(sig, msg, key), expected, 'the strict oracle');
      assert.equal(passes(sig, msg, key), expected, 'first');
      assert.equal(passes(sig, msg, key), expected, 'again');
    });
  }

  it('agrees with strict verification over many keys and messages, valid and one bit off', () => {
    for (let i = 0; i < 40; i++) {
      const sk = ed25519.utils.randomSecretKey();
      const pk = ed25519.getPublicKey(sk);
      const msg = randomBytes(1 + i * 7);
      const sig = ed25519.sign(msg, sk);
      assert.equal(passes(sig, msg, pk), true);
      const bad = flipped(sig, i * 13);
      assert.equal(passes(bad, msg, pk), strict(bad, msg, pk));
    }
  });
});
