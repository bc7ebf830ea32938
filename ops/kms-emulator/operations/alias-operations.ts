/**
 * Emulated KMS alias operations: CreateAlias, UpdateAlias, DeleteAlias, ListAliases.
 *
 * Alias names follow KMS's rules: `alias/` then 1–250 of `[A-Za-z0-9/_-]`, the `alias/aws/` prefix is
 * reserved for AWS managed keys (both InvalidAliasNameException), a name already taken is
 * AlreadyExistsException, and the target must be a key id or key ARN (not another alias) whose key is
 * not pending deletion (KMSInvalidStateException). ListAliases works in every key state and can be
 * filtered by KeyId.
 */
import { z } from 'zod';
import { assertNotPendingDeletion } from '../key-store.js';
import { KmsError } from '../kms-errors.js';
import {
  epochSeconds,
  keyIdSchema,
  paginate,
  paginationSchema,
  parseInput,
  type KmsOperation,
} from './operation-input.js';

const aliasNameSchema = z.string().min(1).max(256);

function assertAliasName(name: string): void {
  if (!/^alias\/[a-zA-Z0-9/_-]{1,250}$/.test(name))
    throw new KmsError(
      'InvalidAliasNameException',
      `Alias must start with the prefix "alias/" followed by characters [a-zA-Z0-9/_-]: ${name}`,
    );
  if (name.startsWith('alias/aws/'))
    throw new KmsError(
      'InvalidAliasNameException',
      `Alias must not begin with 'alias/aws/'. The alias/aws/ prefix is reserved for AWS managed keys.`,
    );
}

export const createAlias: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ AliasName: aliasNameSchema, TargetKeyId: keyIdSchema }), raw);
  assertAliasName(input.AliasName);
  const key = store.resolveKeyNotAlias(input.TargetKeyId);
  assertNotPendingDeletion(key);
  store.createAlias(input.AliasName, key);
  return {};
};

export const updateAlias: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ AliasName: aliasNameSchema, TargetKeyId: keyIdSchema }), raw);
  assertAliasName(input.AliasName);
  const alias = store.getAlias(input.AliasName);
  const key = store.resolveKeyNotAlias(input.TargetKeyId);
  assertNotPendingDeletion(key);
  alias.targetKeyId = key.keyId;
  alias.lastUpdatedDate = new Date();
  return {};
};

export const deleteAlias: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ AliasName: aliasNameSchema }), raw);
  assertAliasName(input.AliasName);
  store.deleteAlias(input.AliasName);
  return {};
};

export const listAliases: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema.optional(), ...paginationSchema }), raw);
  const targetKeyId = input.KeyId === undefined ? undefined : store.resolveKeyNotAlias(input.KeyId).keyId;
  const aliases = store.listAliases().filter((a) => targetKeyId === undefined || a.targetKeyId === targetKeyId);
  const { page, ...rest } = paginate(aliases, input.Limit, input.Marker);
  return {
    Aliases: page.map((a) => ({
      AliasName: a.aliasName,
      AliasArn: a.aliasArn,
      TargetKeyId: a.targetKeyId,
      CreationDate: epochSeconds(a.creationDate),
      LastUpdatedDate: epochSeconds(a.lastUpdatedDate),
    })),
    ...rest,
  };
};
