/**
 * What every emulated KMS operation shares: the context it runs in, zod pieces for KMS's input members
 * (KeyId, base64 blobs, tags, Limit/Marker pagination) and the parse step that turns a zod failure into
 * the ValidationException AWS sends ("1 validation error detected: ..."). Unknown members are ignored,
 * as AWS does, so a newer SDK sending an extra field still works.
 *
 * Blobs arrive base64-encoded in JSON (the SDK encodes Uint8Array members); a string that is not
 * canonical base64 is a SerializationException, as on the real wire.
 */
import { z } from 'zod';
import { KmsError, kmsErrors } from '../kms-errors.js';
import type { KeyStore } from '../key-store.js';
import type { KmsRequestStats } from '../request-stats.js';

export interface OperationContext {
  readonly store: KeyStore;
  readonly stats: KmsRequestStats;
}

export type KmsOperation = (input: unknown, ctx: OperationContext) => unknown;

export const keyIdSchema = z.string().min(1).max(2048);

export const base64BlobSchema = z.string().transform((value, ctx) => {
  const bytes = Buffer.from(value, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    ctx.addIssue({ code: 'custom', message: 'is not valid base64' });
    return z.NEVER;
  }
  return new Uint8Array(bytes);
});

export const tagSchema = z.object({ TagKey: z.string().min(1).max(128), TagValue: z.string().max(256) });
export const tagListSchema = z.array(tagSchema).max(50);

export const paginationSchema = {
  Limit: z.number().int().min(1).max(1000).optional(),
  Marker: z.string().min(1).max(1024).optional(),
};

/** Parses `input` with `schema` or throws the ValidationException (SerializationException for blobs). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues;
  if (issues.some((i) => i.message === 'is not valid base64'))
    throw new KmsError('SerializationException', 'A blob member is not valid base64.');
  const described = issues.map(
    (i) => `Value at '${i.path.map(String).join('.') || '(body)'}' failed to satisfy constraint: ${i.message}`,
  );
  throw kmsErrors.validation(
    `${issues.length} validation error${issues.length === 1 ? '' : 's'} detected: ${described.join('; ')}`,
  );
}

/** One page of `items` for KMS's Limit/Marker pagination; NextMarker is left out on the last page. */
export function paginate<T>(
  items: readonly T[],
  limit: number | undefined,
  marker: string | undefined,
): { page: T[]; Truncated: boolean; NextMarker?: string } {
  let start = 0;
  if (marker !== undefined) {
    const decoded = /^offset:(\d{1,9})$/.exec(Buffer.from(marker, 'base64url').toString('utf8'));
    if (!decoded || Number(decoded[1]) > items.length)
      throw new KmsError(
        'InvalidMarkerException',
        'The request was rejected because the marker that specifies where pagination should next begin is not valid.',
      );
    start = Number(decoded[1]);
  }
  const end = Math.min(items.length, start + (limit ?? 100));
  const page = items.slice(start, end);
  return end < items.length
    ? { page, Truncated: true, NextMarker: Buffer.from(`offset:${end}`).toString('base64url') }
    : { page, Truncated: false };
}

/** KMS timestamps are epoch seconds as JSON numbers (an ISO string breaks the SDK's parser). */
export const epochSeconds = (date: Date): number => date.getTime() / 1000;
