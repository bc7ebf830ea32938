/**
 * `GET /v1/wallets/{id}/payments` and `GET /v1/agents/{id}/payments` (docs/api.md, "Payment history"): the
 * authorizations Treasury signed for a wallet, or for every wallet of an agent, newest first, paged like
 * every list. The API's view returns this type; `xx history` and the MCP `payment_history` tool parse with it.
 *
 * `status`: `signed` (valid and not known to be settled), `settled` (a transaction is known: a reported `exact`
 * or `upto` settlement Treasury verified, or a seller ledger row Treasury verified on chain; it stays
 * `settled` after its window closed), `expired` (its window closed with no settlement Treasury knows of; an
 * `exact` payment may still have settled on chain if neither the buyer nor a seller reported it), `released`
 * (never signed, or given back: nothing can move funds), `reserved` (being signed right now; rare, seconds).
 */
import { z } from 'zod';
import { pageOf, timestampField, usdField } from './response-fields.js';

export const PAYMENT_STATUSES = ['signed', 'settled', 'expired', 'released', 'reserved'] as const;

export const paymentViewSchema = z.object({
  id: z.string().regex(/^auth_[0-9a-f]{24}$/, 'expected an authorization id (auth_…)'),
  wallet_id: z.string().regex(/^wal_[0-9a-f]{24}$/, 'expected a wallet id (wal_…)'),
  status: z.enum(PAYMENT_STATUSES),
  kind: z.string(),
  scheme: z.enum(['exact', 'upto']),
  network: z.string(),
  /** What was signed: the price (`exact`), the maximum (`upto`), the transfer amount. */
  amount_usd: usdField,
  /** Once a settlement was reported and verified: what it moved (`exact`: the whole amount). */
  settled_usd: usdField.nullable(),
  payee: z.string(),
  resource: z.string().nullable(),
  capability: z.string().nullable(),
  decision_id: z.string(),
  tx_hash: z.string().nullable(),
  /** Where tx_hash comes from: Treasury's own check of a reported settlement, or a seller ledger row verified on chain. */
  tx_hash_source: z.enum(['settlement', 'seller_ledger']).nullable(),
  created_at: timestampField,
  valid_before: timestampField,
  settled_at: timestampField.nullable(),
});
export type PaymentView = z.infer<typeof paymentViewSchema>;

export const paymentPageSchema = pageOf('payments', paymentViewSchema);
export type PaymentPage = z.infer<typeof paymentPageSchema>;
