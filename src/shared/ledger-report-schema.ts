/**
 * The ledger report a seller's middleware sends to `POST /v1/ledger` (one row) and `POST /v1/ledger/batch`
 * (up to MAX_LEDGER_BATCH_ROWS rows): defined once here, so the middleware checks its own reports with the
 * schema the API validates them with.
 *
 * Defends: a report the API would refuse being queued and retried forever by the middleware; a route path
 * or amount that the ledger cannot store (paths are bounded and limited to URL path characters, amounts to
 * MAX_AMOUNT_MICRO).
 * A report names an EVM payment (`eip155:*`: a 0x transaction hash and payer) or a Solana one (`solana:*`: a
 * base58 transaction signature of 64 bytes and a base58 payer of 32 bytes, checked with @solana/kit); the
 * spellings must be the network's.
 * Does not defend: a report that is well-formed but false — the API verifies each row on chain before it
 * counts (docs/adr/0009-ledger-verification.md).
 */
import { isAddress, isSignature } from '@solana/kit';
import { z } from 'zod';
import { evmAddressSchema } from '../../policy/policy-schema.js';
import { rawAmount } from './amount-bounds.js';

/** An absolute route path such as /search; `{parameter}` braces allowed for patterns. */
export const routePathSchema = z
  .string()
  .max(512)
  .regex(/^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/{}]*$/, 'expected an absolute path such as /search');

export const httpMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** A Solana CAIP-2 id: `solana:` and the first 32 characters of the cluster's genesis hash. */
export const solanaNetworkSchema = z.string().regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/);
const isSolana = (network: string) => network.startsWith('solana:');

/**
 * A base58 Ed25519 signature (64 bytes). @solana/kit's isSignature throws, rather than answering false, on a
 * 64–88 character value holding a character outside the base58 alphabet (0, O, I, l, x…), so the alphabet is
 * checked first: a hostile transaction hash or pay-to signature is then a 400, not a 500.
 */
export const isSolanaSignature = (value: string): boolean =>
  /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(value) && isSignature(value);
const evmTxHash = /^0x[0-9a-fA-F]{64}$/;

export const ledgerReportBodySchema = z
  .object({
    /** 0x + 32-byte hash (EVM), or a base58 64-byte signature (Solana). */
    tx_hash: z.string().min(64).max(88),
    /** 0x address (EVM), or a base58 address (Solana). */
    payer: z.string().min(32).max(44),
    amount: rawAmount,
    network: z.union([z.string().regex(/^eip155:[1-9][0-9]{0,15}$/), solanaNetworkSchema]),
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
  .strict()
  // One pass over what depends on the network: the tx hash and payer of its family, and an EVM payer in its
  // EIP-55 spelling (as evmAddressSchema gives it, checked and spelled once); a base58 payer as given (case matters).
  .transform((r, ctx) => {
    const solana = isSolana(r.network);
    if (solana ? !isSolanaSignature(r.tx_hash) : !evmTxHash.test(r.tx_hash))
      ctx.addIssue({
        code: 'custom',
        path: ['tx_hash'],
        message: solana ? 'expected a base58 transaction signature' : 'expected a 32-byte transaction hash',
      });
    const evmPayer = solana ? undefined : evmAddressSchema.safeParse(r.payer);
    if (solana ? !isAddress(r.payer) : !evmPayer!.success)
      ctx.addIssue({
        code: 'custom',
        path: ['payer'],
        message: solana ? 'expected a base58 address' : 'expected a 0x-prefixed 20-byte hex address (EIP-55 if mixed)',
      });
    if (solana && r.nonce !== undefined)
      ctx.addIssue({ code: 'custom', path: ['nonce'], message: 'a Solana payment names no nonce' });
    if (ctx.issues.length > 0) return z.NEVER;
    return evmPayer?.success ? { ...r, payer: evmPayer.data } : r;
  });
export type LedgerReportBody = z.infer<typeof ledgerReportBodySchema>;

/** A report's transaction as the ledger keys it: a 0x hash lower-case, a Solana signature as given (case matters). */
export function ledgerTxKey(row: { network: string; tx_hash: string }): string {
  return isSolana(row.network) ? row.tx_hash : row.tx_hash.toLowerCase();
}

/** Up to 100 ledger rows in one call (the seller middleware batches its background reports). */
export const MAX_LEDGER_BATCH_ROWS = 100;
export const ledgerBatchBodySchema = z
  .object({ rows: z.array(ledgerReportBodySchema).min(1).max(MAX_LEDGER_BATCH_ROWS) })
  .strict();
