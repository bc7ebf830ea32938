/**
 * Field schemas the API's response shapes share (./*-responses.ts): ids by prefix, ISO timestamps, USD
 * decimal strings. Each is the shape the API writes (ids are `<prefix>_` + 24 lower-case hex, timestamps
 * `Date#toISOString()`, amounts `formatUsd`), so a client parsing a reply with them refuses a server that
 * answers something else.
 *
 * Defends: a client acting on a reply of the wrong shape (an id that is not one, an amount that is not a
 * decimal). Does not defend: a reply of the right shape with wrong content.
 */
import { z } from 'zod';

/** One literal pattern per id prefix (no pattern is built at run time). */
export const sellerIdField = z.string().regex(/^sel_[0-9a-f]{24}$/, 'expected a seller id (sel_…)');
export const endpointIdField = z.string().regex(/^ep_[0-9a-f]{24}$/, 'expected an endpoint id (ep_…)');
export const patIdField = z.string().regex(/^pat_[0-9a-f]{24}$/, 'expected a PAT id (pat_…)');
export const payoutFlushIdField = z.string().regex(/^po_[0-9a-f]{24}$/, 'expected a payout flush id (po_…)');
export const ledgerEntryIdField = z.string().regex(/^led_[0-9a-f]{24}$/, 'expected a ledger entry id (led_…)');

/** A timestamp as the API writes it (`Date#toISOString()`). */
export const timestampField = z.iso.datetime();

/** A USD decimal string as the API writes it (`formatUsd`: `0.05`, `12`, at most 6 decimals, no exponent). */
export const usdField = z.string().regex(/^-?(0|[1-9][0-9]*)(\.[0-9]{1,6})?$/, 'expected a USD decimal string');

/** The cursor of a paged list: where the next page starts, null on the last page. */
export const nextCursorField = z.string().max(200).nullable();
