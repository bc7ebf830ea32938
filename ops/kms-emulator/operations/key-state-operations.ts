/**
 * Emulated KMS operations that change a key's state: EnableKey, DisableKey, ScheduleKeyDeletion,
 * CancelKeyDeletion, following AWS's key-state table for asymmetric keys:
 *   Enabled ⇄ Disabled (Enable/DisableKey; idempotent), Enabled|Disabled → PendingDeletion
 *   (ScheduleKeyDeletion, PendingWindowInDays 7–30, default 30), PendingDeletion → Disabled
 *   (CancelKeyDeletion). Every other transition from PendingDeletion is KMSInvalidStateException.
 * The key only disappears when a test calls `completePendingDeletions()` on the store.
 */
import { z } from 'zod';
import { assertNotPendingDeletion } from '../key-store.js';
import { KmsError } from '../kms-errors.js';
import { epochSeconds, keyIdSchema, parseInput, type KmsOperation } from './operation-input.js';

const keyIdInput = z.object({ KeyId: keyIdSchema });

export const enableKey: KmsOperation = (raw, { store }) => {
  const key = store.resolveKeyNotAlias(parseInput(keyIdInput, raw).KeyId);
  assertNotPendingDeletion(key);
  key.state = 'Enabled';
  return {};
};

export const disableKey: KmsOperation = (raw, { store }) => {
  const key = store.resolveKeyNotAlias(parseInput(keyIdInput, raw).KeyId);
  assertNotPendingDeletion(key);
  key.state = 'Disabled';
  return {};
};

export const scheduleKeyDeletion: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, PendingWindowInDays: z.number().optional() }), raw);
  const days = input.PendingWindowInDays ?? 30;
  if (!Number.isInteger(days) || days < 7 || days > 30) {
    throw new KmsError(
      'ValidationException',
      `1 validation error detected: Value '${days}' at 'pendingWindowInDays' failed to satisfy constraint: Member must have value between 7 and 30`,
    );
  }
  const key = store.resolveKeyNotAlias(input.KeyId);
  assertNotPendingDeletion(key);
  key.state = 'PendingDeletion';
  key.pendingWindowInDays = days;
  key.deletionDate = new Date(Date.now() + days * 86_400_000);
  return {
    KeyId: key.arn,
    DeletionDate: epochSeconds(key.deletionDate),
    KeyState: 'PendingDeletion',
    PendingWindowInDays: days,
  };
};

export const cancelKeyDeletion: KmsOperation = (raw, { store }) => {
  const key = store.resolveKeyNotAlias(parseInput(keyIdInput, raw).KeyId);
  if (key.state !== 'PendingDeletion')
    throw new KmsError('KMSInvalidStateException', `${key.arn} is not pending deletion.`);
  key.state = 'Disabled';
  delete key.deletionDate;
  delete key.pendingWindowInDays;
  return { KeyId: key.arn };
};
