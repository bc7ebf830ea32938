/**
 * Every row of a paged Treasury list (`{<key>: [...], next_cursor}`, oldest first or as the list orders):
 * reads pages of `PAGE_LIMIT` rows, following `next_cursor` until it is null — or absent, as from a server
 * that answers such a list in one page — so that no command silently shows only the first page.
 *
 * Defends against: a server whose cursor repeats (it would be paged for ever) and a page without the list
 * or with a cursor that is not a string — both `invalid_reply`. Does not defend against: rows added or
 * removed while the pages are read (each page is consistent, the whole is not a snapshot), nor a list too
 * large for memory; the commands using it list what a person reads (PATs, services, endpoints, flushes).
 */
import type { z } from 'zod';
import { checkReply, type ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';

/** Rows asked for per page: the largest page the lists serve. */
export const PAGE_LIMIT = 500;

export interface ReadEveryPageOptions<P> {
  /** The page's response schema (src/shared/api-responses/): every page, `first` included, must match it. */
  page?: z.ZodType<P>;
  /** A first page already read (the answer of a POST that returns one, or another route's first page that `path` continues). */
  first?: P | undefined;
  /** A filter such as `status`, sent with every page. */
  query?: Record<string, string>;
}

/**
 * The list at `path`, every page of it under `key`, with the first page's other fields (e.g. a seller's
 * `accrued_usd` beside its `flushes`). The rest after `first` is read from `path`. A page without
 * `next_cursor` is checked against `page` as the last one (null).
 */
export async function readEveryPage<P extends { next_cursor?: string | null }>(
  client: ApiClient,
  path: string,
  key: Exclude<keyof P, 'next_cursor'> & string,
  options: ReadEveryPageOptions<P> = {},
): Promise<Omit<P, 'next_cursor'>> {
  const { first, query = {}, page: pageSchema } = options;
  const what = `GET ${path}`;
  const invalid = (reason: string) =>
    new CliError({ code: 'invalid_reply', userMessage: `${what} answered an unexpected page: ${reason}.` });
  const rowsOf = (page: P): unknown[] => {
    if (pageSchema)
      checkReply(
        pageSchema,
        page && typeof page === 'object' ? { ...page, next_cursor: page.next_cursor ?? null } : page,
        what,
      );
    const rows = (page as Record<string, unknown> | null)?.[key];
    if (!Array.isArray(rows)) throw invalid(`no "${key}" list`);
    return rows;
  };
  const cursorOf = (page: P): string | null => {
    const cursor = page.next_cursor;
    if (cursor === undefined || cursor === null) return null;
    if (typeof cursor !== 'string' || cursor === '') throw invalid('next_cursor is not a cursor');
    return cursor;
  };

  const head = first ?? (await client.request<P>('GET', path, { query: { ...query, limit: PAGE_LIMIT } }));
  const rows = [...rowsOf(head)];
  const seen = new Set<string>();
  for (let cursor = cursorOf(head); cursor !== null;) {
    if (seen.has(cursor)) throw invalid('a page cursor repeated');
    seen.add(cursor);
    const page = await client.request<P>('GET', path, { query: { ...query, limit: PAGE_LIMIT, cursor } });
    rows.push(...rowsOf(page));
    cursor = cursorOf(page);
  }
  const { next_cursor: _last, ...rest } = head;
  return { ...rest, [key]: rows } as unknown as Omit<P, 'next_cursor'>;
}
