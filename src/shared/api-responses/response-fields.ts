/**
 * Field schemas the API's response shapes share (./*-responses.ts, and the buyer SDK's Treasury boundary):
 * ids by prefix, ISO timestamps, USD decimal strings, EVM hex values and decimal integers. Each is the shape the API writes (ids are `<prefix>_` + 24 lower-case hex, timestamps
 * `Date#toISOString()`, amounts `formatUsd`), so a client parsing a reply with them refuses a server that
 * answers something else.
 *
 * Defends: a client acting on a reply of the wrong shape (an id that is not one, an amount that is not a
 * decimal). Does not defend: a reply of the right shape with wrong content.
 */
import { z } from 'zod';
import { isRawAmount } from '../../../policy/money.js';

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

/** EVM values as the money routes write them: 0x-prefixed hex of a fixed length, one literal pattern each. */
export const evmAddressField = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected 0x-prefixed 20-byte hex');
/** A wallet's address or token of either family: an EVM 0x address, or a base58 Solana address (32 bytes, 32–44 characters). */
export const walletAddressField = z
  .string()
  .regex(
    /^(?:0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/,
    'expected 0x-prefixed 20-byte hex or a base58 Solana address',
  );
/** A base58 Ed25519 signature (64 bytes: 64 to 88 characters), as Solana spells it. */
export const solanaSignatureField = z
  .string()
  .regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'expected a base58 Ed25519 signature');
export const bytes32Field = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x-prefixed 32-byte hex');
export const signatureField = z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'expected 0x-prefixed 65-byte hex');
/** A raw token amount; a decimal uint256 (Permit2 nonces) passes the same test (policy/money.ts `isRawAmount`). */
export const rawAmountField = z.string().refine(isRawAmount, 'expected a raw token amount (base-10 integer string)');
export const uint256Field = z.string().refine(isRawAmount, 'expected a decimal uint256');
/** Unix seconds as a decimal string (authorization windows, deadlines). */
export const unixSecondsField = z.string().regex(/^(0|[1-9][0-9]{0,15})$/, 'expected unix seconds as a decimal string');

/** The cursor of a paged list: where the next page starts, null on the last page. */
export const nextCursorField = z.string().max(200).nullable();

/**
 * A page of a paged list as the API answers it: the items under the list's own key (`sellers`, `entries`, …)
 * and the cursor of the next page.
 */
export function pageOf<K extends string, T extends z.ZodType>(key: K, item: T) {
  const shape = { [key]: z.array(item), next_cursor: nextCursorField } as Record<K, z.ZodArray<T>> & {
    next_cursor: typeof nextCursorField;
  };
  return z.object(shape);
}
