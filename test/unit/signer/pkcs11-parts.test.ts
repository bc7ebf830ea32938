/**
 * The PKCS#11 backend's pure parts: key references (one blob, one name), the handle cache (destroys
 * what it evicts, never a handle in use), the CKR map (by code), and the ECDSA pieces at their edges.
 */
import assert from 'node:assert/strict';
import pkcs11js from 'pkcs11js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { mapCkrCode, toSignerFault } from '../../../signer/backends/pkcs11/ckr-error-map.js';
import { KeyHandleCache } from '../../../signer/backends/pkcs11/key-handle-cache.js';
import { decodeKeyRef, encodeKeyRef } from '../../../signer/backends/pkcs11/pkcs11-key-ref.js';
import { normalizeLowS } from '../../../signer/ecdsa/normalize-low-s.js';
import { RECOVERY_IMPLEMENTATION, recoverPublicKey } from '../../../signer/ecdsa/recover-public-key.js';
import { keyRefSchema } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;
const N = secp256k1.Point.CURVE().n;
const be32 = (x: bigint) => Buffer.from(x.toString(16).padStart(64, '0'), 'hex');

describe('PKCS#11 key references', () => {
  const blob = Buffer.from(Array.from({ length: 72 }, (_, i) => (i * 37 + 11) & 0xff));
  it('round-trip, match the protocol schema, and hash the blob (not the string)', () => {
    const wal = encodeKeyRef('wal', blob);
    assert.ok(keyRefSchema.safeParse(wal).success);
    const decoded = decodeKeyRef(wal);
    assert.equal(decoded.kind, 'wal');
    assert.deepEqual(decoded.blob, blob);
    assert.equal(
      decodeKeyRef(encodeKeyRef('acct', blob)).blobHash,
      decoded.blobHash,
      'same blob, same tombstone key, whatever the prefix',
    );
  });
  it('refuse non-canonical spellings, other versions, and absurd sizes', () => {
    const wal = encodeKeyRef('wal', blob);
    for (const ref of [
      wal + '=',
      wal.replace('p11:v1:', 'p11:v2:'),
      wal.replace('p11:', 'P11:'),
      'p11:v1:wal:',
      'p11:v1:wal:AAAA',
      `p11:v1:wal:${'A'.repeat(2000)}`,
      'p11:v1:key:' + wal.slice(11),
      wal + '\n',
    ]) {
      assert.throws(() => decodeKeyRef(ref), isFault('key_not_found'), ref.slice(0, 40));
    }
    // base64url's last character can carry unused bits: a second spelling of the same bytes is refused.
    const odd = encodeKeyRef('wal', blob.subarray(0, 70));
    const last = odd.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = odd.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1];
    assert.deepEqual(Buffer.from(twin.slice(11), 'base64url'), blob.subarray(0, 70));
    assert.throws(() => decodeKeyRef(twin), isFault('key_not_found'));
  });
  it('name an Ed25519 key by its 16-byte CKA_ID, and nothing else under that prefix', () => {
    const id = blob.subarray(0, 16);
    const ref = encodeKeyRef('ed25519', id);
    assert.ok(keyRefSchema.safeParse(ref).success);
    assert.equal(decodeKeyRef(ref).kind, 'ed25519');
    assert.deepEqual(decodeKeyRef(ref).blob, id);
    for (const bad of [encodeKeyRef('ed25519', blob.subarray(0, 15)), encodeKeyRef('ed25519', blob), ref + 'A'])
      assert.throws(() => decodeKeyRef(bad), isFault('key_not_found'), bad);
  });
});

describe('KeyHandleCache', () => {
  it('destroys evicted handles, but only once their last user is done', async () => {
    const destroyed: number[] = [];
    let next = 100;
    const cache = new KeyHandleCache({ max: 2, ttlMs: 60_000, destroy: (h) => destroyed.push(h.readUInt32LE(0)) });
    const handle = () => {
      const b = Buffer.alloc(8);
      b.writeUInt32LE(next++);
      return b;
    };
    let release!: () => void;
    const pinned = cache.use('a', handle, () => new Promise<void>((r) => (release = r)));
    await cache.use('b', handle, async () => undefined);
    await cache.use('c', handle, async () => undefined); // evicts 'a' while it is in use
    assert.deepEqual(destroyed, [], 'a handle in use is not destroyed');
    release();
    await pinned;
    assert.deepEqual(destroyed, [100]);
    let unwraps = 0;
    await cache.use(
      'b',
      () => (unwraps++, handle()),
      async () => undefined,
    );
    assert.equal(unwraps, 0, 'hit');
    cache.evict('b');
    assert.deepEqual(destroyed, [100, 101]);
    cache.clear();
    assert.deepEqual(destroyed, [100, 101, 102]);
  });

  it('with max 0 unwraps, uses and destroys every time', async () => {
    const destroyed: Buffer[] = [];
    const cache = new KeyHandleCache({ max: 0, ttlMs: 1000, destroy: (h) => destroyed.push(h) });
    await cache.use(
      'a',
      () => Buffer.from([1]),
      async () => undefined,
    );
    await cache.use(
      'a',
      () => Buffer.from([2]),
      async () => undefined,
    );
    assert.deepEqual(destroyed, [Buffer.from([1]), Buffer.from([2])]);
    assert.equal(cache.size, 0);
  });

  it('destroys the handle when the operation fails', async () => {
    const destroyed: Buffer[] = [];
    const cache = new KeyHandleCache({ max: 0, ttlMs: 1000, destroy: (h) => destroyed.push(h) });
    await assert.rejects(
      cache.use(
        'a',
        () => Buffer.from([1]),
        async () => Promise.reject(new Error('boom')),
      ),
      /boom/,
    );
    assert.equal(destroyed.length, 1);
  });
});

describe('CKR error map', () => {
  it('maps by code, and CKR_GENERAL_ERROR means a foreign blob only for unwraps', () => {
    assert.equal(mapCkrCode(pkcs11js.CKR_PIN_INCORRECT, 'C_Login'), 'hsm_unavailable');
    assert.equal(mapCkrCode(pkcs11js.CKR_OPERATION_ACTIVE, 'sign'), 'busy');
    assert.equal(mapCkrCode(pkcs11js.CKR_WRAPPED_KEY_INVALID, 'unwrap_wallet_key'), 'key_not_found');
    assert.equal(mapCkrCode(pkcs11js.CKR_GENERAL_ERROR, 'unwrap_wallet_key'), 'key_not_found');
    assert.equal(mapCkrCode(pkcs11js.CKR_GENERAL_ERROR, 'sign'), 'hsm_error');
    assert.equal(mapCkrCode(0x12345, 'sign'), 'hsm_error');
    const fault = toSignerFault(
      Object.assign(new Error('CKR_PIN_INCORRECT with words that may change'), { code: pkcs11js.CKR_PIN_INCORRECT }),
      'C_Login',
    );
    assert.equal(fault.message, 'C_Login failed (CKR 0x000000a0)');
    assert.equal(toSignerFault(new Error('no code'), 'sign').code, 'hsm_error');
  });
});

describe('ECDSA edges', () => {
  it('normalizeLowS flips high S, keeps low S, refuses r or s out of range', () => {
    const r = 12345n;
    const high = Buffer.concat([be32(r), be32(N - 5n)]);
    assert.deepEqual(Buffer.from(normalizeLowS(high)), Buffer.concat([be32(r), be32(5n)]));
    const low = Buffer.concat([be32(r), be32(5n)]);
    assert.deepEqual(Buffer.from(normalizeLowS(low)), low);
    for (const bad of [
      Buffer.concat([be32(0n), be32(5n)]),
      Buffer.concat([be32(r), be32(0n)]),
      Buffer.concat([be32(N), be32(5n)]),
      Buffer.concat([be32(r), be32(N)]),
    ]) {
      assert.throws(() => normalizeLowS(bad), isFault('hsm_error'));
    }
    assert.throws(() => normalizeLowS(new Uint8Array(65)), isFault('invalid_request'));
  });

  it('normalizeLowS at the boundaries: n/2 kept, n/2 + 1 and n − 1 flipped, r = n − 1 kept, 2²⁵⁶ − 1 refused', () => {
    const half = N >> 1n;
    const r = N - 1n;
    const sOf = (s: bigint) => normalizeLowS(Buffer.concat([be32(r), be32(s)])).subarray(32);
    assert.deepEqual(Buffer.from(sOf(half)), be32(half));
    assert.deepEqual(Buffer.from(sOf(half + 1n)), be32(N - half - 1n));
    assert.deepEqual(Buffer.from(sOf(N - 1n)), be32(1n));
    assert.deepEqual(Buffer.from(sOf(1n)), be32(1n));
    const max = (1n << 256n) - 1n;
    for (const bad of [Buffer.concat([be32(max), be32(5n)]), Buffer.concat([be32(5n), be32(max)])])
      assert.throws(() => normalizeLowS(bad), isFault('hsm_error'));
  });

  it('normalizeLowS agrees with noble (hasHighS, n − s) on random r and s, and leaves its input alone', () => {
    for (let i = 0; i < 500; i++) {
      const raw = new Uint8Array(64);
      raw.set(secp256k1.utils.randomSecretKey(), 0);
      raw.set(secp256k1.utils.randomSecretKey(), 32);
      const copy = Uint8Array.from(raw);
      const sig = secp256k1.Signature.fromBytes(raw, 'compact');
      const expected = (sig.hasHighS() ? new secp256k1.Signature(sig.r, N - sig.s) : sig).toBytes('compact');
      assert.deepEqual(Buffer.from(normalizeLowS(raw)), Buffer.from(expected));
      assert.deepEqual(raw, copy);
    }
  });

  it('recovers with native libsecp256k1, agreeing with noble', () => {
    assert.equal(RECOVERY_IMPLEMENTATION, 'native');
    const priv = secp256k1.utils.randomSecretKey();
    for (let i = 0; i < 20; i++) {
      const digest = secp256k1.utils.randomSecretKey();
      const recovered = secp256k1.sign(digest, priv, { prehash: false, format: 'recovered' }); // v‖r‖s
      const compact = recovered.subarray(1);
      const recid = recovered[0] as 0 | 1;
      assert.deepEqual(recoverPublicKey(compact, recid, digest), secp256k1.getPublicKey(priv, false));
    }
    assert.equal(recoverPublicKey(new Uint8Array(64), 0, new Uint8Array(32)), null);
  });
});
