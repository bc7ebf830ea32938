/**
 * The query strings of the public catalogue (GET /discovery/resources, GET /discovery/search), as the official
 * Bazaar client sends them: every filter a short literal shape, `limit` 1–100, `offset` (and the search's
 * `cursor`, an offset as text) 0–10000, the search text 1–200 characters of plain text (no control or
 * bidirectional-override characters). A value repeated in the query string is refused, like any unknown key.
 *
 * Defends: an unbounded page or scan reaching PostgreSQL, and text that could not be matched as written (the
 * search text is only ever a bound value, matched with its wildcards escaped: ./discovery-search-terms.ts).
 * Refusals carry stable codes: `discovery_page_out_of_range` for limit, offset and cursor,
 * `discovery_query_invalid` for the rest. Does not defend: what the filters are compared with (the store).
 */
import { z } from 'zod';
import { MAX_DISCOVERY_LIMIT, MAX_DISCOVERY_OFFSET } from '../../shared/api-responses/discovery-responses.js';
import { AppError } from '../errors/app-error.js';
import { toStorableText } from '../http/schemas/common-schemas.js';
import { plainText } from '../http/schemas/common-schemas.js';

/** A whole number given as decimal digits (no sign, exponent or fraction), bounded to `max`. */
const boundedCount = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]{1,6}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** A lower-case word: the protocol type (`http`), a scheme (`exact`), an extension key (`bazaar`). */
const word = z.string().regex(/^[a-z0-9_-]{1,32}$/, 'expected a short lower-case word');

const filters = {
  type: word.optional(),
  scheme: word.optional(),
  extensions: word.optional(),
  /** CAIP-2: a namespace and a reference (`eip155:84532`). */
  network: z
    .string()
    .regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, 'expected a CAIP-2 network id')
    .optional(),
  payTo: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address')
    .optional(),
};

export const discoveryResourcesQuerySchema = z
  .object({
    ...filters,
    limit: boundedCount(1, MAX_DISCOVERY_LIMIT).default(20),
    offset: boundedCount(0, MAX_DISCOVERY_OFFSET).default(0),
  })
  .strict();
export type DiscoveryResourcesQuery = z.infer<typeof discoveryResourcesQuerySchema>;

export const discoverySearchQuerySchema = z
  .object({
    ...filters,
    query: plainText(200),
    limit: boundedCount(1, MAX_DISCOVERY_LIMIT).default(20),
    /** Where the page starts, as the previous page's `pagination.cursor` gave it. */
    cursor: boundedCount(0, MAX_DISCOVERY_OFFSET).default(0),
  })
  .strict();
export type DiscoverySearchQuery = z.infer<typeof discoverySearchQuerySchema>;

/** The filters both routes share, as the store takes them. */
export type DiscoveryFilters = Pick<DiscoveryResourcesQuery, 'type' | 'scheme' | 'extensions' | 'network' | 'payTo'>;

const PAGE_KEYS = new Set(['limit', 'offset', 'cursor']);

/** Parses a catalogue query string with `schema`, or throws 400 with the catalogue's stable codes. */
export function parseDiscoveryQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 20).map((i) => ({
    path: toStorableText(i.path.map(String).join('.').slice(0, 200)),
    message: toStorableText(i.message.slice(0, 200)),
  }));
  const page = parsed.error.issues.some((i) => PAGE_KEYS.has(String(i.path[0])));
  throw new AppError(page ? 'discovery_page_out_of_range' : 'discovery_query_invalid', { fields: { issues } });
}
