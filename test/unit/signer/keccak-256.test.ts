/**
 * Keccak-256 as the signer hashes with it (signer/keccak-256.ts): the published vectors, and @noble/hashes' answer
 * for every length from 0 to three rate blocks and past them, whichever implementation this Node gives. OpenSSL's
 * where Node's OpenSSL offers `keccak-256` (Node 24: CI runs this file there too, ops/test/node24-smoke.sh), so a
 * Node whose OpenSSL named SHA3-256 so would fail here; and never SHA3-256 (the other padding).
 */
import assert from 'node:assert/strict';
import { createHash, getHashes, randomBytes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { keccak256, KECCAK_256_IMPLEMENTATION } from '../../../signer/keccak-256.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe(`signer: Keccak-256 (${KECCAK_256_IMPLEMENTATION} on Node ${process.versions.node})`, () => {
  it("uses OpenSSL's exactly when this Node's OpenSSL offers keccak-256", () => {
    assert.equal(KECCAK_256_IMPLEMENTATION, getHashes().includes('keccak-256') ? 'openssl' : '@noble/hashes');
    if (Number(process.versions.node.split('.')[0]) >= 24) assert.equal(KECCAK_256_IMPLEMENTATION, 'openssl');
  });

  it('answers the published vectors, not SHA3-256', () => {
    const vectors: Array<[string, string]> = [
      ['', 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
      ['abc', '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'],
      // EIP-3009's TRANSFER_WITH_AUTHORIZATION_TYPEHASH, as the USDC contract publishes it.
      [
        'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
        '7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267',
      ],
    ];
    for (const [text, digest] of vectors) {
      const out = keccak256(new TextEncoder().encode(text));
      assert.ok(out instanceof Uint8Array);
      assert.equal(out.length, 32);
      assert.equal(hex(out), digest, JSON.stringify(text));
      assert.notEqual(hex(out), createHash('sha3-256').update(text).digest('hex'));
    }
  });

  it('equals @noble/hashes for every length up to three blocks and past them, and for views into larger buffers', () => {
    for (let length = 0; length <= 3 * 136 + 2; length++) {
      const data = randomBytes(length);
      assert.equal(hex(keccak256(data)), hex(keccak_256(data)), `length ${length}`);
    }
    for (const length of [1_000, 4_096, 65_537]) {
      const data = randomBytes(length);
      assert.equal(hex(keccak256(data)), hex(keccak_256(data)), `length ${length}`);
    }
    const backing = randomBytes(300);
    const view = backing.subarray(37, 37 + 64);
    assert.equal(hex(keccak256(view)), hex(keccak_256(new Uint8Array(view))), 'a view hashes its own bytes only');
  });
});
