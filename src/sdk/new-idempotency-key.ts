/**
 * The Idempotency-Key the SDK sends with each signature it asks for: `<prefix>-<12 hex of milliseconds>-<UUID v4>`.
 * Treasury keeps it in a unique index per wallet; starting with the time, each wallet's keys land at that
 * index's right edge rather than on a random page (a random page's first change after a checkpoint writes the
 * whole page to the WAL). The UUID keeps two keys made in the same millisecond apart. Not a secret.
 */
export function newIdempotencyKey(prefix: string, now: number = Date.now()): string {
  return `${prefix}-${now.toString(16).padStart(12, '0')}-${globalThis.crypto.randomUUID()}`;
}
