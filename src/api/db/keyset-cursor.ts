/**
 * Opaque page cursors for lists ordered by (created_at, id): base64url of `ISO time|id`, naming the last row
 * of a page. The next page is the rows after it in the list's order, found on the list's index, so a page
 * costs the same at any depth and rows added meanwhile neither shift nor repeat a page.
 *
 * Defends against: a cursor that is not one of ours (wrong shape, a time that is not written as this service
 * writes times — ISO 8601 in UTC with milliseconds, between 1970 and 9999, so a year PostgreSQL cannot hold never
 * reaches a query —, an id of another kind) — refused with `invalid_request` before any query. Does not defend against: a cursor
 * replayed by someone else — it names a position, not a permission; every list still filters by its
 * caller's own account or seller.
 * Times are written by the service at millisecond precision, which the ISO form keeps exactly.
 * `readKeysetPage` is how every paged list reads a page; the list keeps only its own filter and id shape.
 */
import type { Knex } from 'knex';
import { AppError } from '../errors/app-error.js';

export interface KeysetPosition {
  at: Date;
  id: string;
}

export function encodeKeysetCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

/**
 * The latest time a cursor may name: the end of year 9999 (PostgreSQL's timestamptz goes further, JSON dates do
 * not); the earliest is 1970-01-01T00:00:00Z (0). Query times taken from a caller are held to the same bounds.
 */
export const LATEST_CURSOR_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The time a cursor names when it is written exactly as `encodeKeysetCursor` writes times; else undefined. */
function cursorTime(at: string | undefined): Date | undefined {
  if (at === undefined) return undefined;
  const time = Date.parse(at);
  if (!(time >= 0 && time <= LATEST_CURSOR_TIME)) return undefined;
  const date = new Date(time);
  return date.toISOString() === at ? date : undefined;
}

/** The position a cursor names; `idPattern` is the id shape of the list's rows (e.g. /^wal_[0-9a-f]{24}$/). */
export function decodeKeysetCursor(cursor: string, idPattern: RegExp): KeysetPosition {
  const [at, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const time = cursorTime(at);
  if (extra !== undefined || !id || !idPattern.test(id) || time === undefined) {
    throw new AppError('invalid_request', { message: 'The cursor is malformed.' });
  }
  return { at: time, id };
}

/** Restricts a list ordered by (created_at, id) to the rows after `position` in that order (`desc`: before it). */
export function whereAfter<Q extends Knex.QueryBuilder>(
  query: Q,
  position: KeysetPosition,
  order: 'asc' | 'desc' = 'asc',
): Q {
  return query.andWhereRaw(`(created_at, id) ${order === 'asc' ? '>' : '<'} (?::timestamptz, ?)`, [
    position.at,
    position.id,
  ]) as Q;
}

/** A page from rows read with `limit + 1`: the first `limit`, and the cursor of the next page when there is one. */
export function keysetPage<R extends { created_at: Date; id: string }>(
  rows: readonly R[],
  limit: number,
): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    page,
    nextCursor: rows.length > limit && last ? encodeKeysetCursor({ at: last.created_at, id: last.id }) : null,
  };
}

/** What a paged list route asks for: at most `limit` rows, after the position `cursor` names (from the start without one). */
export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/**
 * Reads one page of a list ordered by (created_at, id): `query` selects the caller's rows of one table (the
 * columns unqualified); this orders it, reads `limit + 1` rows after the cursor and cuts the page. The cursor
 * is checked against `idPattern` before any query, so a cursor of another list is `invalid_request`.
 */
export async function readKeysetPage<R extends { created_at: Date; id: string }>(
  query: Knex.QueryBuilder,
  request: PageRequest,
  idPattern: RegExp,
  order: 'asc' | 'desc' = 'asc',
): Promise<{ page: R[]; nextCursor: string | null }> {
  const position = request.cursor === undefined ? undefined : decodeKeysetCursor(request.cursor, idPattern);
  query
    .orderBy([
      { column: 'created_at', order },
      { column: 'id', order },
    ])
    .limit(request.limit + 1);
  if (position) whereAfter(query, position, order);
  return keysetPage((await query) as R[], request.limit);
}
