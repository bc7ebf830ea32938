/**
 * The AWS KMS backend's Ed25519 parts: wallet references that name their curve (one key, one spelling),
 * the raw 32-byte key read from an Ed25519 SPKI, and the key policy that allows only PureEdDSA over RAW
 * messages on an Ed25519 key.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import * as keyRef from '../../../signer/backends/aws-kms/kms-key-ref.js';
import { walletKeyPolicy } from '../../../signer/backends/aws-kms/kms-key-policy.js';
import { spkiToEd25519PublicKey, spkiToUncompressedPoint } from '../../../signer/backends/aws-kms/kms-public-key.js';
import { keyRefSchema } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;
const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab';

describe('AWS KMS backend: Ed25519 parts', () => {
  it('an Ed25519 wallet reference names its curve, in one canonical spelling', () => {
    const ref = keyRef.encodeWalletRef(KEY_ID, 'ed25519');
    assert.equal(ref, `kms:v1:ed25519:${KEY_ID}`);
    assert.ok(keyRefSchema.safeParse(ref).success);
    assert.deepEqual(keyRef.decodeWalletKey(ref), { keyId: KEY_ID, curve: 'ed25519' });
    assert.deepEqual(keyRef.decodeWalletKey(keyRef.encodeWalletRef(KEY_ID)), { keyId: KEY_ID, curve: 'secp256k1' });
    for (const bad of [`kms:v1:ED25519:${KEY_ID}`, `kms:v1:ed25519:${KEY_ID.toUpperCase()}`, `${ref} `, 'kms:v1:ed:x'])
      assert.throws(() => keyRef.decodeWalletKey(bad), isFault('key_not_found'), bad);
  });

  it('reads the raw 32-byte key from an Ed25519 SPKI (44 bytes) and refuses other key types', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const spki = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }));
    assert.equal(spki.length, 44);
    assert.deepEqual(spkiToEd25519PublicKey(spki), spki.subarray(12));
    const secp = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({
      format: 'der',
      type: 'spki',
    });
    assert.throws(() => spkiToEd25519PublicKey(new Uint8Array(secp)), isFault('hsm_error'));
    assert.throws(() => spkiToUncompressedPoint(spki), isFault('hsm_error'));
    assert.throws(() => spkiToEd25519PublicKey(spki.subarray(0, 40)), isFault('hsm_error'));
  });

  it('an Ed25519 key policy allows only PureEdDSA over RAW messages, and no digest signing', () => {
    const policy = JSON.parse(
      walletKeyPolicy({
        curve: 'ed25519',
        awsAccountId: '111122223333',
        signerPrincipalArn: 'arn:aws:iam::111122223333:role/treasury-signer',
        adminPrincipalArn: undefined,
        treasuryAccountId: 'ab'.repeat(16),
      }),
    );
    const bySid = Object.fromEntries(policy.Statement.map((s: { Sid: string }) => [s.Sid, s]));
    assert.equal(bySid.DigestsOnly, undefined);
    assert.deepEqual(bySid.RawMessagesOnly.Condition, { StringNotEquals: { 'kms:MessageType': 'RAW' } });
    assert.deepEqual(bySid.PureEd25519Only.Condition, {
      StringNotEquals: { 'kms:SigningAlgorithm': 'ED25519_SHA_512' },
    });
    assert.equal(bySid.PureEd25519Only.Effect, 'Deny');
    assert.ok(bySid.DestroyedStaysDestroyed);
  });
});
