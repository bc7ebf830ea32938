/**
 * The signer's pure parts: the EIP-712 digest against the x402 spec vector, low-S normalisation and
 * recovery-id search against signatures made by an independent implementation (noble), the static
 * invariants, and the frame decoder's limits.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { assertTransferInvariants } from '../../../signer/assert.js';
import { finalizeSignature } from '../../../signer/ecdsa/finalize-signature.js';
import { hashTransferAuthorization } from '../../../signer/eip3009/hash-transfer-authorization.js';
import { encodeFrame, FrameDecoder } from '../../../signer/protocol/frame-codec.js';
import { MAX_FRAME_BYTES } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';

const vector = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/eip3009-x402-spec-vector.json'), 'utf8'));
const N = secp256k1.Point.CURVE().n;

describe('EIP-3009 digest', () => {
  it('matches the x402 specification vector', () => {
    assert.equal(hashTransferAuthorization(vector.domain, vector.message), vector.digest);
  });
  it('differs under the mainnet domain name (the classic testnet/mainnet mix-up)', () => {
    assert.notEqual(hashTransferAuthorization({ ...vector.domain, name: 'USD Coin' }, vector.message), vector.digest);
  });
});

describe('finalizeSignature', () => {
  const priv = secp256k1.utils.randomSecretKey();
  const address = privateKeyToAddress(bytesToHex(priv));

  it('normalises high-S, finds v, and recovers to the address for many digests', () => {
    let highSeen = 0;
    for (let i = 0; i < 200; i++) {
      const digest = secp256k1.utils.randomSecretKey(); // 32 random bytes
      const sig = secp256k1.Signature.fromBytes(secp256k1.sign(digest, priv, { prehash: false, lowS: true }), 'compact');
      const high = i % 2 === 0;
      const s = high ? N - sig.s : sig.s;
      if (s > N / 2n) highSeen++;
      const raw = new Uint8Array(64);
      raw.set(hexToBytes(`0x${sig.r.toString(16).padStart(64, '0')}`), 0);
      raw.set(hexToBytes(`0x${s.toString(16).padStart(64, '0')}`), 32);
      const out = finalizeSignature(digest, raw, address);
      assert.ok(BigInt(out.s) <= N / 2n, 'low-S');
      assert.ok(out.v === 27 || out.v === 28);
      const recovered = secp256k1.Signature.fromBytes(hexToBytes(out.signature).subarray(0, 64), 'compact').addRecoveryBit(out.v - 27).recoverPublicKey(digest);
      assert.equal(privateKeyToAddress(bytesToHex(priv)), address);
      assert.equal(bytesToHex(recovered.toBytes(false)), bytesToHex(secp256k1.getPublicKey(priv, false)));
    }
    assert.equal(highSeen, 100);
  });

  it('refuses a signature that does not recover to the expected address', () => {
    const digest = secp256k1.utils.randomSecretKey();
    const compact = secp256k1.sign(digest, priv, { prehash: false });
    assert.throws(() => finalizeSignature(digest, compact, '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'), (e: unknown) => e instanceof SignerFault && e.code === 'address_mismatch');
  });

  it('refuses digests and signatures of the wrong length', () => {
    assert.throws(() => finalizeSignature(new Uint8Array(31), new Uint8Array(64), address), (e: unknown) => e instanceof SignerFault && e.code === 'invalid_request');
    assert.throws(() => finalizeSignature(new Uint8Array(32), new Uint8Array(63), address), (e: unknown) => e instanceof SignerFault && e.code === 'invalid_request');
  });
});

describe('static invariants', () => {
  const invariants = { allowedTokens: [{ chainId: 84532, address: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' }], maxValue: 1_000_000n, maxValiditySeconds: 3600 };
  const now = 1_800_000_000;
  const from = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
  const good = { ...vector.message, from, value: '1000', validAfter: '0', validBefore: String(now + 600) };
  const check = (overrides: Record<string, unknown>, domain = vector.domain, address = from) =>
    assertTransferInvariants(invariants, address, domain, { ...good, ...overrides }, now);
  const refused = (fn: () => void, pattern: RegExp) => assert.throws(fn, (e: unknown) => e instanceof SignerFault && e.code === 'invariant_violation' && pattern.test(e.message));

  it('accepts an authorization inside every bound, at the exact edges too', () => {
    check({});
    check({ value: '1000000' }); // = max
    check({ validBefore: String(now + 3600) }); // window = max
    check({ validAfter: String(now + 100), validBefore: String(now + 100 + 3600) }); // future start, window = max
    check({}, { ...vector.domain, verifyingContract: vector.domain.verifyingContract.toUpperCase().replace('0X', '0x') });
    check({}, vector.domain, from.toLowerCase());
  });
  it('refuses other tokens, chains, senders, values and windows, naming the rule', () => {
    refused(() => check({}, { ...vector.domain, chainId: 8453 }), /^allowed_token: /);
    refused(() => check({}, { ...vector.domain, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }), /^allowed_token: /);
    refused(() => check({}, vector.domain, '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'), /^from_is_wallet: /);
    refused(() => check({ value: '0' }), /^value_positive: /);
    refused(() => check({ value: '1000001' }), /^value_max: .*1000000/);
    refused(() => check({ validAfter: String(now + 700), validBefore: String(now + 600) }), /^window_ordered: /);
    refused(() => check({ validAfter: String(now + 600), validBefore: String(now + 600) }), /^window_ordered: /);
    refused(() => check({ validBefore: String(now) }), /^window_open: /);
    refused(() => check({ validBefore: String(now - 1) }), /^window_open: /);
    refused(() => check({ validBefore: String(now + 3601) }), /^window_max: .*3600/);
    refused(() => check({ validAfter: String(now + 100), validBefore: String(now + 100 + 3601) }), /^window_max: /);
  });
});

describe('frame decoder', () => {
  it('reassembles frames split across chunks and several frames in one chunk', () => {
    const a = encodeFrame({ a: 1 });
    const b = encodeFrame({ b: 'x'.repeat(1000) });
    const all = Buffer.concat([a, b]);
    const decoder = new FrameDecoder();
    const events = [...decoder.push(all.subarray(0, 3)), ...decoder.push(all.subarray(3, 600)), ...decoder.push(all.subarray(600))];
    assert.deepEqual(events.map((e) => (e.kind === 'frame' ? JSON.parse(e.payload.toString()) : e.kind)), [{ a: 1 }, { b: 'x'.repeat(1000) }]);
  });
  it('refuses an oversize length prefix before buffering, and empty frames', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1);
    assert.deepEqual(new FrameDecoder().push(header), [{ kind: 'too_large', length: MAX_FRAME_BYTES + 1 }]);
    assert.deepEqual(new FrameDecoder().push(Buffer.alloc(4)), [{ kind: 'empty' }]);
    assert.throws(() => encodeFrame({ x: 'y'.repeat(MAX_FRAME_BYTES) }), RangeError);
  });
});
