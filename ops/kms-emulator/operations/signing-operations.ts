/**
 * Emulated KMS cryptographic operations on an ECC_SECG_P256K1 or ECC_NIST_EDWARDS25519 key: GetPublicKey,
 * Sign, Verify.
 *
 * As on AWS: the key must be Enabled (DisabledException / KMSInvalidStateException otherwise); the only
 * signing algorithm is ECDSA_SHA_256 (another known algorithm is InvalidKeyUsageException, an unknown
 * one ValidationException); `Message` is 1–4096 bytes; with `MessageType: DIGEST` it must be exactly 32
 * bytes and is signed as is (a Keccak-256 digest is fine), with `RAW` (the default) it is SHA-256-hashed
 * first; a Verify that fails is KMSInvalidSignatureException, never `SignatureValid: false`; `DryRun`
 * answers DryRunOperationException after every check. Response KeyIds are key ARNs. Signatures are DER,
 * randomised and high-S about half the time, like KMS's (see secp256k1-key-pair.ts). An Ed25519 key signs
 * only with ED25519_SHA_512 and MessageType RAW (the raw 64-byte RFC 8032 signature over the message, see
 * ed25519-key-pair.ts); ED25519_PH_SHA_512 is refused as unsupported by the emulator.
 *
 * Every Sign that produced a signature is recorded (key and digest; for Ed25519 the message's SHA-256) in the request stats, so a test can
 * prove that no payment was signed twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { signEd25519, verifyEd25519 } from '../ed25519-key-pair.js';
import { assertUsable, type EmulatedKey } from '../key-store.js';
import { KmsError } from '../kms-errors.js';
import { messageToDigest, signDigestDer, verifyDigestDer } from '../secp256k1-key-pair.js';
import { signingAlgorithmOf } from './key-operations.js';
import {
  base64BlobSchema,
  keyIdSchema,
  parseInput,
  type KmsOperation,
  type OperationContext,
} from './operation-input.js';

const SIGNING_ALGORITHMS = [
  'RSASSA_PSS_SHA_256',
  'RSASSA_PSS_SHA_384',
  'RSASSA_PSS_SHA_512',
  'RSASSA_PKCS1_V1_5_SHA_256',
  'RSASSA_PKCS1_V1_5_SHA_384',
  'RSASSA_PKCS1_V1_5_SHA_512',
  'ECDSA_SHA_256',
  'ECDSA_SHA_384',
  'ECDSA_SHA_512',
  'SM2DSA',
  'ML_DSA_SHAKE_256',
  'ED25519_SHA_512',
  'ED25519_PH_SHA_512',
] as const;

const signInput = z.object({
  KeyId: keyIdSchema,
  Message: base64BlobSchema,
  MessageType: z.enum(['RAW', 'DIGEST', 'EXTERNAL_MU']).optional(),
  SigningAlgorithm: z.enum(SIGNING_ALGORITHMS),
  GrantTokens: z.array(z.string()).max(10).optional(),
  DryRun: z.boolean().optional(),
});

const verifyInput = signInput.extend({ Signature: base64BlobSchema });

function checkMessageLength(message: Uint8Array): void {
  if (message.length < 1 || message.length > 4096)
    throw new KmsError(
      'ValidationException',
      "1 validation error detected: Value at 'message' failed to satisfy constraint: Member must have length between 1 and 4096",
    );
}

/** What an ECC_SECG_P256K1 key signs: the 32-byte digest. */
function digestOf(input: z.output<typeof signInput>): Uint8Array {
  checkMessageLength(input.Message);
  if (input.SigningAlgorithm !== 'ECDSA_SHA_256')
    throw new KmsError(
      'InvalidKeyUsageException',
      `The signing algorithm ${input.SigningAlgorithm} is not supported by an ECC_SECG_P256K1 key.`,
    );
  const messageType = input.MessageType ?? 'RAW';
  if (messageType === 'EXTERNAL_MU')
    throw new KmsError('InvalidKeyUsageException', 'EXTERNAL_MU is valid only with ML-DSA keys.');
  if (messageType === 'DIGEST' && input.Message.length !== 32) {
    throw new KmsError(
      'ValidationException',
      `Digest is invalid length for algorithm ECDSA_SHA_256: ${input.Message.length} bytes, 32 expected.`,
    );
  }
  return messageToDigest(input.Message, messageType);
}

/** What an ECC_NIST_EDWARDS25519 key signs: the message itself (PureEdDSA, MessageType RAW). */
function ed25519MessageOf(input: z.output<typeof signInput>): Uint8Array {
  checkMessageLength(input.Message);
  if (input.SigningAlgorithm === 'ED25519_PH_SHA_512')
    throw new KmsError('UnsupportedOperationException', 'ED25519_PH_SHA_512 is not supported by the KMS emulator.');
  if (input.SigningAlgorithm !== 'ED25519_SHA_512')
    throw new KmsError(
      'InvalidKeyUsageException',
      `The signing algorithm ${input.SigningAlgorithm} is not supported by an ECC_NIST_EDWARDS25519 key.`,
    );
  if ((input.MessageType ?? 'RAW') !== 'RAW')
    throw new KmsError('ValidationException', 'ED25519_SHA_512 requires MessageType RAW.');
  return input.Message;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export const getPublicKey: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, GrantTokens: z.array(z.string()).optional() }), raw);
  const key = store.resolve(input.KeyId);
  assertUsable(key);
  return {
    KeyId: key.arn,
    PublicKey: b64(key.material.spki),
    KeySpec: key.keySpec,
    CustomerMasterKeySpec: key.keySpec,
    KeyUsage: 'SIGN_VERIFY',
    SigningAlgorithms: [signingAlgorithmOf(key.keySpec)],
  };
};

/**
 * The usable key a Sign or Verify names and the digest it is about, every check made in AWS's order (the key,
 * then the message); a DryRun answers DryRunOperationException once they all passed.
 */
function checkedKeyAndDigest(
  input: z.output<typeof signInput>,
  store: OperationContext['store'],
): { key: EmulatedKey; digest: Uint8Array } {
  const key = store.resolve(input.KeyId);
  assertUsable(key);
  const digest = key.material.kind === 'ed25519' ? ed25519MessageOf(input) : digestOf(input);
  if (input.DryRun === true)
    throw new KmsError(
      'DryRunOperationException',
      'The request would have succeeded, but the DryRun parameter was set.',
    );
  return { key, digest };
}

export const sign: KmsOperation = (raw, { store, stats }) => {
  const { key, digest } = checkedKeyAndDigest(parseInput(signInput, raw), store);
  const material = key.material;
  if (material.kind === 'ed25519') {
    const signature = signEd25519(digest, material.privateKey);
    stats.recordSignature(key.keyId, new Uint8Array(createHash('sha256').update(digest).digest()));
    return { KeyId: key.arn, Signature: b64(signature), SigningAlgorithm: 'ED25519_SHA_512' };
  }
  const signature = signDigestDer(digest, material.secretKey);
  stats.recordSignature(key.keyId, digest);
  return { KeyId: key.arn, Signature: b64(signature), SigningAlgorithm: 'ECDSA_SHA_256' };
};

export const verify: KmsOperation = (raw, { store }) => {
  const input = parseInput(verifyInput, raw);
  const { key, digest } = checkedKeyAndDigest(input, store);
  const material = key.material;
  const valid =
    material.kind === 'ed25519'
      ? verifyEd25519(input.Signature, digest, material.spki)
      : verifyDigestDer(input.Signature, digest, material.publicKey);
  if (!valid) throw new KmsError('KMSInvalidSignatureException', 'The signature is not valid for the message and key.');
  return { KeyId: key.arn, SignatureValid: true, SigningAlgorithm: signingAlgorithmOf(key.keySpec) };
};
