/**
 * The catalogue entries of the x402 `payment-identifier` store routes (./payment-id-routes.ts); ../../api-catalog.ts
 * puts every family together.
 *
 * Defends: a client generated from the document meeting these routes, replies or errors undescribed. Does not
 * defend: what the routes decide (./payment-id-service.ts).
 */
import type { CatalogEntry } from '../../http/openapi/catalog-entry.js';
import {
  paymentIdBeginBodySchema,
  paymentIdBeginReplySchema,
  paymentIdCompleteBodySchema,
  paymentIdDoneReplySchema,
  paymentIdReleaseBodySchema,
} from '../../../shared/payment-identifier-wire.js';

const OPERATIONS = [
  {
    step: 'begin',
    name: 'beginPaymentId',
    summary:
      'Claim a payment-identifier id before verify, or get who holds it (the stored answer for the same fingerprint)',
    body: paymentIdBeginBodySchema,
    reply: paymentIdBeginReplySchema,
    /** A new id past the seller's ids budget. */
    errors: ['payment_id_limit_reached'],
  },
  {
    step: 'complete',
    name: 'completePaymentId',
    summary: "Keep a settled payment's answer for its payment-identifier id (24 h)",
    body: paymentIdCompleteBodySchema,
    reply: paymentIdDoneReplySchema,
    /** An answer that does not fit the seller's bytes budget even without its body. */
    errors: ['payment_id_limit_reached'],
  },
  {
    step: 'release',
    name: 'releasePaymentId',
    summary: 'Drop a pending payment-identifier claim whose payment did not settle',
    body: paymentIdReleaseBodySchema,
    reply: paymentIdDoneReplySchema,
    errors: [],
  },
] as const;

export const PAYMENT_ID_CATALOG: CatalogEntry[] = [
  ...OPERATIONS.map((o): CatalogEntry => ({
    method: 'POST',
    path: `/v1/payment-ids/${o.step}`,
    operationId: o.name,
    summary: `${o.summary} (seller middleware)`,
    auth: 'service',
    body: o.body,
    replies: { 200: o.reply },
    errors: ['seller_suspended', ...o.errors],
  })),
  ...OPERATIONS.map((o): CatalogEntry => ({
    method: 'POST',
    path: `/v1/gate/payment-ids/${o.step}`,
    operationId: `gate${o.name[0]!.toUpperCase()}${o.name.slice(1)}`,
    summary: `${o.summary} (the gate; endpoint_id names the seller)`,
    auth: 'gate',
    body: o.body,
    replies: { 200: o.reply },
    errors: ['endpoint_not_found', ...o.errors],
  })),
];
