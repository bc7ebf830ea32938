/**
 * Emulated KMS operations that create and describe keys: CreateKey, DescribeKey, ListKeys, GetKeyPolicy.
 *
 * CreateKey accepts only what Treasury uses, an asymmetric `ECC_SECG_P256K1` or `ECC_NIST_EDWARDS25519`
 * key for `SIGN_VERIFY` (origin AWS_KMS, single-Region); anything else is refused with a ValidationException or
 * UnsupportedOperationException that says the emulator does not support it, rather than quietly
 * creating a key of another kind. The policy, when given, must be a JSON document (else
 * MalformedPolicyDocumentException) and is stored as sent; it is never evaluated. Tags are stored.
 * KeyMetadata carries what DescribeKey returns on AWS (timestamps as epoch seconds, Arn, KeyState,
 * DeletionDate and PendingDeletionWindowInDays while pending deletion).
 */
import { z } from 'zod';
import { KmsError } from '../kms-errors.js';
import { EMULATED_KEY_SPECS, type EmulatedKey, type EmulatedKeySpec } from '../key-store.js';
import {
  epochSeconds,
  keyIdSchema,
  paginate,
  paginationSchema,
  parseInput,
  tagListSchema,
  type KmsOperation,
} from './operation-input.js';

const DEFAULT_POLICY_NOTE = 'default key policy: the account root may use the key (not evaluated by the emulator)';

const createKeyInput = z.object({
  KeySpec: z.string().optional(),
  CustomerMasterKeySpec: z.string().optional(),
  KeyUsage: z.string().optional(),
  Description: z.string().max(8192).optional(),
  Policy: z.string().min(1).max(32768).optional(),
  Tags: tagListSchema.optional(),
  Origin: z.string().optional(),
  MultiRegion: z.boolean().optional(),
  BypassPolicyLockoutSafetyCheck: z.boolean().optional(),
});

/** The one signing algorithm the emulator offers for a key spec. */
export function signingAlgorithmOf(spec: EmulatedKeySpec): 'ECDSA_SHA_256' | 'ED25519_SHA_512' {
  return spec === 'ECC_NIST_EDWARDS25519' ? 'ED25519_SHA_512' : 'ECDSA_SHA_256';
}

export function keyMetadata(key: EmulatedKey, accountId: string): Record<string, unknown> {
  return {
    AWSAccountId: accountId,
    KeyId: key.keyId,
    Arn: key.arn,
    CreationDate: epochSeconds(key.creationDate),
    Enabled: key.state === 'Enabled',
    Description: key.description,
    KeyUsage: 'SIGN_VERIFY',
    KeyState: key.state,
    ...(key.deletionDate ? { DeletionDate: epochSeconds(key.deletionDate) } : {}),
    ...(key.pendingWindowInDays !== undefined ? { PendingDeletionWindowInDays: key.pendingWindowInDays } : {}),
    Origin: 'AWS_KMS',
    KeyManager: 'CUSTOMER',
    CustomerMasterKeySpec: key.keySpec,
    KeySpec: key.keySpec,
    SigningAlgorithms: [signingAlgorithmOf(key.keySpec)],
    MultiRegion: false,
  };
}

export const createKey: KmsOperation = (raw, { store }) => {
  const input = parseInput(createKeyInput, raw);
  const spec = input.KeySpec ?? input.CustomerMasterKeySpec ?? 'SYMMETRIC_DEFAULT';
  // The two spellings of the spec may both be given only when they agree.
  const specsGiven = new Set([input.KeySpec, input.CustomerMasterKeySpec].filter((s) => s !== undefined));
  if (specsGiven.size > 1)
    throw new KmsError(
      'ValidationException',
      'KeySpec and CustomerMasterKeySpec must not both be given with different values.',
    );
  if (!(EMULATED_KEY_SPECS as readonly string[]).includes(spec))
    throw new KmsError(
      'UnsupportedOperationException',
      `KeySpec ${spec} is not supported by the KMS emulator (only ${EMULATED_KEY_SPECS.join(', ')}).`,
    );
  if ((input.KeyUsage ?? 'ENCRYPT_DECRYPT') !== 'SIGN_VERIFY') {
    throw new KmsError(
      'ValidationException',
      `KeyUsage ${input.KeyUsage ?? 'ENCRYPT_DECRYPT'} is not valid for KeySpec ${spec} in the KMS emulator (use SIGN_VERIFY).`,
    );
  }
  if ((input.Origin ?? 'AWS_KMS') !== 'AWS_KMS')
    throw new KmsError('UnsupportedOperationException', `Origin ${input.Origin} is not supported by the KMS emulator.`);
  if (input.MultiRegion === true)
    throw new KmsError('UnsupportedOperationException', 'Multi-Region keys are not supported by the KMS emulator.');
  if (input.Policy !== undefined) {
    try {
      const parsed: unknown = JSON.parse(input.Policy);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    } catch {
      throw new KmsError('MalformedPolicyDocumentException', 'The new key policy is not a valid JSON policy document.');
    }
  }
  const key = store.createKey({
    keySpec: spec as EmulatedKeySpec,
    description: input.Description ?? '',
    policy: input.Policy ?? JSON.stringify({ Note: DEFAULT_POLICY_NOTE }),
    tags: input.Tags ?? [],
  });
  return { KeyMetadata: keyMetadata(key, store.accountId) };
};

export const describeKey: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, GrantTokens: z.array(z.string()).optional() }), raw);
  return { KeyMetadata: keyMetadata(store.resolve(input.KeyId), store.accountId) };
};

export const listKeys: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object(paginationSchema), raw);
  const { page, ...rest } = paginate(store.listKeys(), input.Limit, input.Marker);
  return { Keys: page.map((k) => ({ KeyId: k.keyId, KeyArn: k.arn })), ...rest };
};

export const getKeyPolicy: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, PolicyName: z.string().optional() }), raw);
  if ((input.PolicyName ?? 'default') !== 'default')
    throw new KmsError('NotFoundException', `Policy ${input.PolicyName} is not found.`);
  const key = store.resolveKeyNotAlias(input.KeyId);
  return { Policy: key.policy, PolicyName: 'default' };
};
