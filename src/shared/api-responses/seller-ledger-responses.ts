/**
 * What the API answers about a seller's money: ledger rows (GET /v1/ledger, POST /v1/ledger), the revenue
 * summary (GET /v1/ledger/revenue), payouts (GET /v1/sellers/{id}/payouts, POST …/payouts/flush) and proven
 * pay-to addresses. Defined once here: the API's ledger service is typed with the derived types and the `xx`
 * CLI parses the replies with the schemas.
 *
 * Defends: the server and its clients drifting apart silently; a client acting on a reply of another shape.
 * Does not defend: a reply of the right shape with wrong content (a row counts once verified on chain:
 * docs/adr/0009-ledger-verification.md). Keys are listed in the order the API writes them.
 */
import { z } from 'zod';
import {
  endpointIdField,
  ledgerEntryIdField,
  nextCursorField,
  pageOf,
  payoutFlushIdField,
  sellerIdField,
  timestampField,
  usdField,
} from './response-fields.js';
import { payoutModeSchema } from './seller-responses.js';

/** pending until verified on chain; only verified rows count toward revenue and payables. */
export const ledgerStatusSchema = z.enum(['pending', 'verified', 'rejected']);
export type LedgerStatus = z.infer<typeof ledgerStatusSchema>;

/** One ledger row; `amount` raw token units, `amount_usd` the same in USD. */
export const ledgerEntryViewSchema = z.object({
  id: ledgerEntryIdField,
  seller_id: sellerIdField,
  endpoint_id: endpointIdField.nullable(),
  tx_hash: z.string(),
  payer: z.string(),
  amount_usd: usdField,
  amount: z.string().regex(/^(0|[1-9][0-9]*)$/, 'expected a raw token amount'),
  network: z.string(),
  method: z.string().nullable(),
  route: z.string().nullable(),
  content_hash: z.string().nullable(),
  authorization_id: z.string().nullable(),
  decision_id: z.string().nullable(),
  status: ledgerStatusSchema,
  /** Why a row is pending or rejected (stable snake_case); null once verified. */
  reason: z.string().nullable(),
  confirmations: z.number().int().nullable(),
  verified_at: timestampField.nullable(),
  created_at: timestampField,
});
export type LedgerEntryView = z.infer<typeof ledgerEntryViewSchema>;

/** A page of GET /v1/ledger (newest first). */
export const ledgerPageSchema = pageOf('entries', ledgerEntryViewSchema);
export type LedgerPage = z.infer<typeof ledgerPageSchema>;

const countedUsdSchema = z.object({ count: z.number().int().nonnegative(), total_usd: usdField });

/** GET /v1/ledger/revenue: verified rows per endpoint; `pending` and `rejected` say what is not counted. */
export const revenueSummarySchema = z.object({
  seller_id: sellerIdField,
  counts: z.literal('verified'),
  pending: countedUsdSchema,
  rejected: countedUsdSchema,
  total_usd: usdField,
  count: z.number().int().nonnegative(),
  by_endpoint: z.array(
    z.object({ endpoint_id: endpointIdField.nullable(), total_usd: usdField, count: z.number().int().nonnegative() }),
  ),
});
export type RevenueSummary = z.infer<typeof revenueSummarySchema>;

/**
 * A payout: `recorded` (written before payouts were transfers: no money moved), or a transfer out of the
 * seller's collection wallet — `pending` (recorded), `submitted` (signed, handed to the facilitator), `settled`
 * (mined: `tx_hash`) or `failed` (expired unspent, given back). `reason` says what holds an unfinished one.
 */
export const payoutFlushViewSchema = z.object({
  id: payoutFlushIdField,
  amount_usd: usdField,
  created_at: timestampField,
  status: z.enum(['recorded', 'pending', 'submitted', 'settled', 'failed']),
  network: z.string().nullable(),
  pay_to: z.string().nullable(),
  tx_hash: z.string().nullable(),
  reason: z.string().nullable(),
  settled_at: timestampField.nullable(),
});
export type PayoutFlushView = z.infer<typeof payoutFlushViewSchema>;

/** GET /v1/sellers/{id}/payouts and POST …/payouts/flush: accrued payables and a page of the flush history, newest first. */
export const payoutsPageSchema = z.object({
  seller_id: sellerIdField,
  payout_mode: payoutModeSchema,
  accrued_usd: usdField,
  counts: z.literal('verified'),
  pending_usd: usdField,
  pending_count: z.number().int().nonnegative(),
  advance_usd: usdField,
  flushes: z.array(payoutFlushViewSchema),
  next_cursor: nextCursorField,
});
export type PayoutsPage = z.infer<typeof payoutsPageSchema>;

/** GET and POST /v1/sellers/{id}/pay-to: the seller's proven pay-to addresses, oldest first. */
export const payToListSchema = z.object({
  seller_id: sellerIdField,
  pay_to: z.array(
    z.object({
      /** An EVM address (EIP-55) or a Solana one (base58). */
      address: z.string().regex(/^(?:0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/, 'expected an address'),
      created_at: timestampField,
    }),
  ),
});
export type PayToList = z.infer<typeof payToListSchema>;

/** POST /v1/ledger (201 stored, 200 the same seller and tx_hash reported again): the row and whether it was a repeat. */
export const ledgerReportedSchema = ledgerEntryViewSchema.extend({ duplicate: z.boolean() });
export type LedgerReported = z.infer<typeof ledgerReportedSchema>;

/** POST /v1/ledger/batch: one outcome per row, in order; a refused row carries its error code, a stored one its state. */
export const ledgerBatchResultSchema = z.object({
  results: z.array(
    z.object({
      tx_hash: z.string(),
      outcome: z.enum(['created', 'duplicate', 'rejected']),
      status: ledgerStatusSchema.optional(),
      reason: z.string().nullable().optional(),
      error_code: z.string().optional(),
    }),
  ),
});
export type LedgerBatchResult = z.infer<typeof ledgerBatchResultSchema>;
