/**
 * The KMS emulator signs like AWS KMS, through the real @aws-sdk/client-kms over HTTP: GetPublicKey is
 * the 88-byte DER SPKI of a valid secp256k1 point; Sign with MessageType DIGEST signs the 32 bytes as
 * given (no second hash) with a randomised DER signature that @noble/curves verifies and that viem
 * recovers to the key's address once normalised to low-S, while about half the raw signatures are
 * high-S as KMS's are; Verify accepts good signatures and answers KMSInvalidSignatureException for bad
 * ones; wrong digest lengths and algorithms are refused; a disabled key is DisabledException, a key
 * pending deletion KMSInvalidStateException; the stats know how often each digest was signed.
 */
import assert from 'node:assert/strict';
import {
  CreateAliasCommand,
  DisableKeyCommand,
  EnableKeyCommand,
  GetPublicKeyCommand,
  ScheduleKeyDeletionCommand,
  SignCommand,
  VerifyCommand,
  type KMSClient,
  type SigningAlgorithmSpec,
} from '@aws-sdk/client-kms';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, keccak256, recoverAddress, recoverPublicKey, serializeSignature, toHex, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { createSigningKey, digestOf, kmsClient, kmsFailure, useKmsEmulatorClient } from './kms-emulator-test-client.js';

const SPKI_PREFIX = '3056301006072a8648ce3d020106052b8104000a034200';
const N = secp256k1.Point.CURVE().n;

async function publicKeyOf(client: KMSClient, keyId: string): Promise<Uint8Array> {
  const out = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
  assert.ok(out.PublicKey);
  const spki = out.PublicKey;
  assert.equal(spki.length, 88, 'DER SubjectPublicKeyInfo of an uncompressed secp256k1 point');
  assert.equal(Buffer.from(spki.subarray(0, 23)).toString('hex'), SPKI_PREFIX);
  return spki.subarray(23);
}

/** A Sign request for a 32-byte digest, with ECDSA_SHA_256 unless `algorithm` names another. */
function digestSignCommand(keyId: string, digest: Uint8Array, algorithm: SigningAlgorithmSpec = 'ECDSA_SHA_256') {
  return new SignCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: algorithm });
}

async function signDigest(client: KMSClient, keyId: string, digest: Uint8Array): Promise<Uint8Array> {
  const out = await client.send(digestSignCommand(keyId, digest));
  assert.equal(out.SigningAlgorithm, 'ECDSA_SHA_256');
  assert.ok(out.Signature);
  return out.Signature;
}

describe('KMS emulator: signing through the real AWS SDK', function () {
  const { kms, client } = useKmsEmulatorClient();

  it('GetPublicKey answers the DER SPKI of a secp256k1 point, the same by key id, ARN and alias', async () => {
    const key = await createSigningKey(client);
    const point = await publicKeyOf(client, key.keyId);
    assert.equal(point[0], 0x04);
    assert.doesNotThrow(() => secp256k1.Point.fromBytes(point).assertValidity());
    assert.deepEqual(await publicKeyOf(client, key.arn), point);
    await client.send(new CreateAliasCommand({ AliasName: 'alias/public-key-test', TargetKeyId: key.keyId }));
    assert.deepEqual(await publicKeyOf(client, 'alias/public-key-test'), point);
    assert.deepEqual(
      await publicKeyOf(client, `arn:aws:kms:${kms.region}:${kms.accountId}:alias/public-key-test`),
      point,
    );
    const response = await client.send(new GetPublicKeyCommand({ KeyId: key.keyId }));
    assert.equal(response.KeyId, key.arn, 'response KeyId is the key ARN');
    assert.equal(response.KeySpec, 'ECC_SECG_P256K1');
    assert.deepEqual(response.SigningAlgorithms, ['ECDSA_SHA_256']);
  });

  it('Sign DIGEST: DER signatures over the digest itself, verified by noble and recovered by viem after low-S; about half are high-S', async () => {
    const key = await createSigningKey(client);
    const point = await publicKeyOf(client, key.keyId);
    const address = publicKeyToAddress(bytesToHex(point));
    let highS = 0;
    const rounds = 64;
    for (let i = 0; i < rounds; i++) {
      const digest = digestOf(`payment ${i}`);
      const der = await signDigest(client, key.keyId, digest);
      assert.ok(der.length >= 8 && der.length <= 72 && der[0] === 0x30, 'a DER SEQUENCE');
      assert.ok(
        secp256k1.verify(der, digest, point, { prehash: false, lowS: false, format: 'der' }),
        'verifies over the digest as given',
      );
      assert.ok(
        !secp256k1.verify(der, keccak256(digest, 'bytes'), point, { prehash: false, lowS: false, format: 'der' }),
        'not over a hash of it',
      );
      const raw = secp256k1.Signature.fromBytes(der, 'der');
      if (raw.hasHighS()) highS++;
      const s = raw.s > N / 2n ? N - raw.s : raw.s;
      const r = toHex(raw.r, { size: 32 });
      const recovered: Hex[] = [];
      for (const yParity of [0, 1] as const) {
        const signature = serializeSignature({ r, s: toHex(s, { size: 32 }), yParity });
        if ((await recoverAddress({ hash: digest, signature })) === address)
          recovered.push(await recoverPublicKey({ hash: digest, signature }));
      }
      assert.deepEqual(recovered, [bytesToHex(point)], 'exactly one recovery id gives back the KMS key');
    }
    assert.ok(
      highS > 0 && highS < rounds,
      `high-S signatures come back un-normalised, as from KMS (${highS}/${rounds})`,
    );
    assert.equal(kms.stats.timesSigned(digestOf('payment 0'), key.keyId), 1);
    assert.deepEqual(kms.stats.digestsSignedMoreThanOnce(), []);
  });

  it('signing the same digest twice gives two different signatures (KMS does not use RFC 6979), and the stats see both', async () => {
    const key = await createSigningKey(client);
    const digest = digestOf('signed twice');
    const a = await signDigest(client, key.keyId, digest);
    const b = await signDigest(client, key.keyId, digest);
    assert.notDeepEqual(a, b);
    assert.equal(kms.stats.timesSigned(digest), 2);
    assert.deepEqual(
      kms.stats.digestsSignedMoreThanOnce().map((d) => d.digest),
      [bytesToHex(digest)],
    );
  });

  it('Verify: a good signature is valid, a tampered one is KMSInvalidSignatureException (never SignatureValid false)', async () => {
    const key = await createSigningKey(client);
    const digest = digestOf('verify me');
    const der = await signDigest(client, key.keyId, digest);
    const ok = await client.send(
      new VerifyCommand({
        KeyId: key.keyId,
        Message: digest,
        MessageType: 'DIGEST',
        Signature: der,
        SigningAlgorithm: 'ECDSA_SHA_256',
      }),
    );
    assert.equal(ok.SignatureValid, true);
    const other = await kmsFailure(
      client.send(
        new VerifyCommand({
          KeyId: key.keyId,
          Message: digestOf('other'),
          MessageType: 'DIGEST',
          Signature: der,
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      ),
    );
    assert.equal(other.name, 'KMSInvalidSignatureException');
    assert.equal(other.status, 400);
    const garbage = await kmsFailure(
      client.send(
        new VerifyCommand({
          KeyId: key.keyId,
          Message: digest,
          MessageType: 'DIGEST',
          Signature: new Uint8Array([1, 2, 3]),
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      ),
    );
    assert.equal(garbage.name, 'KMSInvalidSignatureException');
  });

  it('refuses a digest that is not 32 bytes, and algorithms the key cannot use', async () => {
    const key = await createSigningKey(client);
    for (const length of [31, 33, 64]) {
      const failure = await kmsFailure(client.send(digestSignCommand(key.keyId, new Uint8Array(length))));
      assert.equal(failure.name, 'ValidationException', `${length} bytes`);
      assert.equal(failure.status, 400);
    }
    const rsa = await kmsFailure(client.send(digestSignCommand(key.keyId, digestOf('x'), 'RSASSA_PSS_SHA_256')));
    assert.equal(rsa.name, 'InvalidKeyUsageException');
    const received = kms.stats.received('Sign');
    const signatures = kms.stats.snapshot().signatures;
    assert.ok(received >= 4);
    assert.equal(kms.stats.snapshot().signatures, signatures, 'no signature was produced for a refused request');
  });

  it('RAW messages are SHA-256-hashed first, as KMS does (MessageType defaults to RAW)', async () => {
    const key = await createSigningKey(client);
    const point = await publicKeyOf(client, key.keyId);
    const message = new TextEncoder().encode('not a digest, any length');
    const out = await client.send(
      new SignCommand({ KeyId: key.keyId, Message: message, SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    const sha = new Uint8Array(await crypto.subtle.digest('SHA-256', message));
    assert.ok(secp256k1.verify(out.Signature!, sha, point, { prehash: false, lowS: false, format: 'der' }));
  });

  it('a disabled key: DisabledException on Sign and GetPublicKey (not retried); enabled again, it signs', async () => {
    const key = await createSigningKey(client);
    await client.send(new DisableKeyCommand({ KeyId: key.keyId }));
    const retrying = kmsClient(kms, { retries: 3 });
    const sign = await kmsFailure(retrying.send(digestSignCommand(key.arn, digestOf('d'))));
    assert.equal(sign.name, 'DisabledException');
    assert.equal(sign.message, `${key.arn} is disabled.`);
    assert.equal(sign.fault, 'client');
    assert.equal(sign.attempts, 1, 'the SDK does not retry DisabledException');
    retrying.destroy();
    assert.equal(
      (await kmsFailure(client.send(new GetPublicKeyCommand({ KeyId: key.keyId })))).name,
      'DisabledException',
    );
    await client.send(new EnableKeyCommand({ KeyId: key.keyId }));
    await signDigest(client, key.keyId, digestOf('enabled again'));
  });

  it('a key pending deletion: KMSInvalidStateException on Sign; after the window it is NotFound', async () => {
    const key = await createSigningKey(client);
    const scheduled = await client.send(new ScheduleKeyDeletionCommand({ KeyId: key.keyId, PendingWindowInDays: 7 }));
    assert.equal(scheduled.KeyState, 'PendingDeletion');
    const failure = await kmsFailure(client.send(digestSignCommand(key.keyId, digestOf('p'))));
    assert.equal(failure.name, 'KMSInvalidStateException');
    assert.equal(failure.message, `${key.arn} is pending deletion.`);
    assert.deepEqual(kms.keys.completePendingDeletions(), [key.keyId]);
    const gone = await kmsFailure(client.send(digestSignCommand(key.keyId, digestOf('p'))));
    assert.equal(gone.name, 'NotFoundException');
  });
});
