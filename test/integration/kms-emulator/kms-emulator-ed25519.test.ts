/**
 * The KMS emulator's Ed25519 keys, through the real @aws-sdk/client-kms over HTTP, checked with Node's own
 * crypto (not the emulator's code path): CreateKey ECC_NIST_EDWARDS25519 for SIGN_VERIFY; GetPublicKey is
 * the 44-byte DER SPKI of an Ed25519 key; Sign with ED25519_SHA_512 and MessageType RAW answers a raw
 * 64-byte signature that crypto.verify accepts for the message and refuses for another; Verify agrees;
 * ECDSA on an Ed25519 key, DIGEST with ED25519_SHA_512 and Ed25519ph are refused.
 */
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { CreateKeyCommand, GetPublicKeyCommand, SignCommand, VerifyCommand } from '@aws-sdk/client-kms';
import { kmsFailure, useKmsEmulatorClient } from './kms-emulator-test-client.js';

describe('KMS emulator: Ed25519 keys through the real AWS SDK', function () {
  this.timeout(30_000);
  const { client } = useKmsEmulatorClient();
  let keyId: string;

  before(async () => {
    const out = await client.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_EDWARDS25519', KeyUsage: 'SIGN_VERIFY', Description: 'ed25519 test' }),
    );
    assert.equal(out.KeyMetadata?.KeySpec, 'ECC_NIST_EDWARDS25519');
    assert.deepEqual(out.KeyMetadata?.SigningAlgorithms, ['ED25519_SHA_512']);
    keyId = out.KeyMetadata!.KeyId!;
  });

  const signRaw = (message: Uint8Array) =>
    client.send(
      new SignCommand({ KeyId: keyId, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ED25519_SHA_512' }),
    );

  it('signs messages with RFC 8032 Ed25519 that node:crypto verifies against the SPKI GetPublicKey answers', async () => {
    const pub = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
    assert.equal(pub.KeySpec, 'ECC_NIST_EDWARDS25519');
    assert.equal(pub.PublicKey?.length, 44);
    const key = createPublicKey({ key: Buffer.from(pub.PublicKey!), format: 'der', type: 'spki' });
    assert.equal(key.asymmetricKeyType, 'ed25519');
    for (const length of [1, 100, 1232, 4096]) {
      const message = crypto.getRandomValues(new Uint8Array(length));
      const out = await signRaw(message);
      assert.equal(out.SigningAlgorithm, 'ED25519_SHA_512');
      assert.equal(out.Signature?.length, 64);
      assert.ok(verify(null, message, key, out.Signature!), `a ${length}-byte message`);
      // Another message: the same one with its first bit flipped (a fresh random one of one byte is the same one
      // time in 256).
      const other = message.slice();
      other[0]! ^= 1;
      assert.equal(verify(null, other, key, out.Signature!), false);
      const checked = await client.send(
        new VerifyCommand({
          KeyId: keyId,
          Message: message,
          MessageType: 'RAW',
          Signature: out.Signature!,
          SigningAlgorithm: 'ED25519_SHA_512',
        }),
      );
      assert.equal(checked.SignatureValid, true);
    }
  });

  it('refuses ECDSA on an Ed25519 key, DIGEST with ED25519_SHA_512, Ed25519ph, and messages over 4,096 bytes', async () => {
    const message = new Uint8Array(32).fill(1);
    const ecdsa = await kmsFailure(
      client.send(
        new SignCommand({ KeyId: keyId, Message: message, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
      ),
    );
    assert.equal(ecdsa.name, 'InvalidKeyUsageException');
    const digest = await kmsFailure(
      client.send(
        new SignCommand({ KeyId: keyId, Message: message, MessageType: 'DIGEST', SigningAlgorithm: 'ED25519_SHA_512' }),
      ),
    );
    assert.equal(digest.name, 'ValidationException');
    const prehashed = await kmsFailure(
      client.send(
        new SignCommand({
          KeyId: keyId,
          Message: message,
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ED25519_PH_SHA_512',
        }),
      ),
    );
    assert.equal(prehashed.name, 'UnsupportedOperationException');
    assert.equal((await kmsFailure(signRaw(new Uint8Array(4097)))).name, 'ValidationException');
  });
});
