/**
 * Emulated KMS tag operations: TagResource (adds or overwrites), UntagResource, ListResourceTags.
 * A key takes at most 50 tags (TagException past it); keys pending deletion cannot be (un)tagged
 * (KMSInvalidStateException) but their tags can still be listed. The KeyId must be a key id or key ARN.
 */
import { z } from 'zod';
import { assertNotPendingDeletion } from '../key-store.js';
import { KmsError } from '../kms-errors.js';
import {
  keyIdSchema,
  paginate,
  paginationSchema,
  parseInput,
  tagListSchema,
  type KmsOperation,
} from './operation-input.js';

const MAX_TAGS_PER_KEY = 50;

export const tagResource: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, Tags: tagListSchema }), raw);
  const key = store.resolveKeyNotAlias(input.KeyId);
  assertNotPendingDeletion(key);
  const merged = new Map(key.tags);
  for (const tag of input.Tags) merged.set(tag.TagKey, tag.TagValue);
  if (merged.size > MAX_TAGS_PER_KEY)
    throw new KmsError('TagException', `A key may have at most ${MAX_TAGS_PER_KEY} tags.`);
  for (const tag of input.Tags) key.tags.set(tag.TagKey, tag.TagValue);
  return {};
};

export const untagResource: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, TagKeys: z.array(z.string().min(1).max(128)).max(50) }), raw);
  const key = store.resolveKeyNotAlias(input.KeyId);
  assertNotPendingDeletion(key);
  for (const tagKey of input.TagKeys) key.tags.delete(tagKey);
  return {};
};

export const listResourceTags: KmsOperation = (raw, { store }) => {
  const input = parseInput(z.object({ KeyId: keyIdSchema, ...paginationSchema }), raw);
  const key = store.resolveKeyNotAlias(input.KeyId);
  const tags = [...key.tags].map(([TagKey, TagValue]) => ({ TagKey, TagValue }));
  const { page, ...rest } = paginate(tags, input.Limit, input.Marker);
  return { Tags: page, ...rest };
};
