/**
 * The KMS emulator's operation table: `X-Amz-Target: TrentService.<Operation>` → the function that runs
 * it. An unknown target, or one outside the TrentService prefix, is UnknownOperationException, as AWS
 * JSON services answer; operations not listed here are simply not emulated (Encrypt, GenerateDataKey,
 * grants, custom key stores...).
 */
import { KmsError } from './kms-errors.js';
import { createAlias, deleteAlias, listAliases, updateAlias } from './operations/alias-operations.js';
import { createKey, describeKey, getKeyPolicy, listKeys } from './operations/key-operations.js';
import { cancelKeyDeletion, disableKey, enableKey, scheduleKeyDeletion } from './operations/key-state-operations.js';
import type { KmsOperation } from './operations/operation-input.js';
import { getPublicKey, sign, verify } from './operations/signing-operations.js';
import { listResourceTags, tagResource, untagResource } from './operations/tag-operations.js';

export const KMS_TARGET_PREFIX = 'TrentService.';

export const KMS_OPERATIONS = {
  CancelKeyDeletion: cancelKeyDeletion,
  CreateAlias: createAlias,
  CreateKey: createKey,
  DeleteAlias: deleteAlias,
  DescribeKey: describeKey,
  DisableKey: disableKey,
  EnableKey: enableKey,
  GetKeyPolicy: getKeyPolicy,
  GetPublicKey: getPublicKey,
  ListAliases: listAliases,
  ListKeys: listKeys,
  ListResourceTags: listResourceTags,
  ScheduleKeyDeletion: scheduleKeyDeletion,
  Sign: sign,
  TagResource: tagResource,
  UntagResource: untagResource,
  UpdateAlias: updateAlias,
  Verify: verify,
} satisfies Record<string, KmsOperation>;

export type KmsOperationName = keyof typeof KMS_OPERATIONS;

/** The operation an `X-Amz-Target` names, or UnknownOperationException. */
export function operationOfTarget(target: string | undefined): { name: KmsOperationName; run: KmsOperation } {
  if (target?.startsWith(KMS_TARGET_PREFIX)) {
    const name = target.slice(KMS_TARGET_PREFIX.length);
    if (Object.hasOwn(KMS_OPERATIONS, name))
      return { name: name as KmsOperationName, run: KMS_OPERATIONS[name as KmsOperationName] };
  }
  throw new KmsError(
    'UnknownOperationException',
    target === undefined ? 'Missing X-Amz-Target header.' : `Unknown operation ${target}`,
  );
}
