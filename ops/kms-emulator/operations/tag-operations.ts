/**
 * Emulated KMS tag operations: TagResource (adds or overwrites), UntagResource, ListResourceTags.
 * A key takes at most 50 tags (TagException past it); keys pending deletion cannot be (un)tagged
 * (KMSInvalidStateException) but their tags can still be listed. The KeyId must be a key id or key ARN.
 */
import { z } from 'zod';
import { assertNotPendingDeletion } from '../key-store.js';
import { KmsError } from '../kms-errors.js';
import * as op from './operation-input.js';

const MAX_TAGS_PER_KEY = 50;

export const tagResource: op.KmsOperation = (raw, { store }) => {
  const input = op.parseInput(z.object({ KeyId: op.keyIdSchema, Tags: op.tagListSchema }), raw);
  const key = store.resolveKeyNotAlias(input.KeyId);
  assertNotPendingDeletion(key);
  const merged = new Map(key.tags);
  for (const tag of input.Tags) merged.set(tag.TagKey, tag.TagValue);
  if (merged.size > MAX_TAGS_PER_KEY)
    throw new KmsError('TagException', `A key may have at most ${MAX_TAGS_PER_KEY} tags.`);
  for (const tag of input.Tags) key.tags.set(tag.TagKey, tag.TagValue);
  return {};
};

export const untagResource: op.KmsOperation = (raw, { store }) => {
  const input = op.parseInput(
    z.object({ KeyId: op.keyIdSchema, TagKeys: z.array(z.string().min(1).max(128)).max(50) }),
    raw,
  );
  const key = store.resolveKeyNotAlias(input.KeyId);
  assertNotPendingDeletion(key);
  for (const tagKey of input.TagKeys) key.tags.delete(tagKey);
  return {};
};

export const listResourceTags: op.KmsOperation = (raw, { store }) => {
  const input = op.parseInput(z.object({ KeyId: op.keyIdSchema, ...op.paginationSchema }), raw);
  const key = store.resolveKeyNotAlias(input.KeyId);
  const tags = [...key.tags].map(([TagKey, TagValue]) => ({ TagKey, TagValue }));
  const { page, ...rest } = op.paginate(tags, input.Limit, input.Marker);
  return { Tags: page, ...rest };
};
