/**
 * The ledger report a seller's middleware sends to `POST /v1/ledger` (one row) and `POST /v1/ledger/batch`
 * (up to MAX_LEDGER_BATCH_ROWS rows): defined once here, so the middleware checks its own reports with the
 * schema the API validates them with.
 *
 * Defends: a report the API would refuse being queued and retried forever by the middleware; a route path
 * or amount that the ledger cannot store (paths are bounded and limited to URL path characters, amounts to
 * MAX_AMOUNT_MICRO).
 * Does not defend: a report that is well-formed but false — the API verifies each row on chain before it
 * counts (docs/adr/0009-ledger-verification.md).
 */
import { z } from 'zod';
import { evmAddressSchema } from '../../policy/policy-schema.js';
import { rawAmount } from './amount-bounds.js';

/** An absolute route path such as /search; `{parameter}` braces allowed for patterns. */
export const routePathSchema = z
  .string()
  .max(512)
  .regex(/^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/{}]*$/, 'expected an absolute path such as /search');

export const httpMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export const ledgerReportBodySchema = z
  .object({
    tx_hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte transaction hash'),
    payer: evmAddressSchema,
    amount: rawAmount,
    network: z.string().regex(/^eip155:[1-9][0-9]{0,15}$/),
    endpoint_id: z
      .string()
      .regex(/^ep_[0-9a-f]{24}$/)
      .optional(),
    method: httpMethodSchema.optional(),
    route: routePathSchema.optional(),
    content_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected a lower-case hex sha256')
      .optional(),
    nonce: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/)
      .optional(),
  })
  .strict();
export type LedgerReportBody = z.infer<typeof ledgerReportBodySchema>;

/** Up to 100 ledger rows in one call (the seller middleware batches its background reports). */
export const MAX_LEDGER_BATCH_ROWS = 100;
export const ledgerBatchBodySchema = z
  .object({ rows: z.array(ledgerReportBodySchema).min(1).max(MAX_LEDGER_BATCH_ROWS) })
  .strict();
