/**
 * Where a buyer keeps its purchases between attempts (x402-purchase.ts): the x402 `payment-identifier` of
 * each logical purchase and, once signed, the payment it sent, by a purchase key the caller chooses. A store
 * is three calls — `get`, `put`, `delete` — so it can live in memory (`memoryPurchaseStore`, the buyer's
 * default: it survives a retry in this process), in files (file-purchase-store.ts, what the CLI uses: it
 * survives the process) or anywhere the caller likes.
 *
 * Defends against: a record that is not one (every record is checked with `storedPurchaseSchema` on its way in
 * and out — read back from a file, fields a newer version added are dropped: `readStoredPurchaseSchema`); a store
 * growing without end (the memory store forgets expired records and holds at most MAX_MEMORY_PURCHASES; when
 * full it refuses a new purchase rather than forget a live one); one seller filling it for every other (at most
 * MAX_LIVE_PURCHASES_PER_ORIGIN live purchases per origin: purchase-origin-bound.ts).
 * Does not defend against: a store that loses what it was given (a crash of the memory store's process, a
 * caller's store that drops writes): what is lost can be paid again by a new purchase.
 */
import { z } from 'zod';
import { paymentRequirementsSchema } from '../x402/wire-schemas.js';
import { PurchaseStoreError } from './purchase-errors.js';
import { assertOriginHasRoom } from './purchase-origin-bound.js';
import { payReplySchema } from './solana-pay-reply.js';

/** The extension's identifier rule: 16 to 128 characters of `[A-Za-z0-9_-]` (`isValidPaymentId`). */
export const paymentIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,128}$/, 'expected 16 to 128 characters of A-Z a-z 0-9 _ -');

/** What names one logical purchase in a store: 1 to 256 printable ASCII characters, no spaces. */
export const purchaseKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,256}$/, 'expected 1 to 256 printable ASCII characters without spaces');

/** The largest payment header a record keeps (an x402 payload, base64). */
export const MAX_PAYMENT_HEADER_CHARS = 32_768;

/** The payment a purchase sent (or was about to send): sent again as is on a retry, never signed again. */
export const storedSignedSchema = z
  .object({
    /** The accepts entry it pays. */
    requirements: paymentRequirementsSchema,
    /** The payment header's value: the encoded x402 payload, with the purchase's identifier in it when declared. */
    paymentHeader: z.string().min(1).max(MAX_PAYMENT_HEADER_CHARS),
    /** Treasury's record of the payment (a Treasury wallet's). */
    payment: payReplySchema.optional(),
    /** What was signed, in the payload's terms (as the payer returned them; read back only for the result). */
    terms: z.record(z.string(), z.unknown()),
    /** Who pays, when the payer said. */
    payer: z.string().max(128).optional(),
  })
  .strict();
export type StoredSigned = z.infer<typeof storedSignedSchema>;

/** One logical purchase: its identifier, its lifetime, the request it is for and, once signed, its payment. */
export const storedPurchaseSchema = z
  .object({
    paymentId: paymentIdSchema,
    /** When the purchase began, unix milliseconds. */
    createdAt: z.number().int().min(0).max(8.64e15),
    /** After this (unix milliseconds) nothing the record holds can settle: it may be forgotten. */
    expiresAt: z.number().int().min(0).max(8.64e15),
    /**
     * The request the purchase is for: the SHA-256 (hex) of its method and URL (x402-purchase.ts); it is resumed
     * on that request only. Absent in records written before it was kept: those are not resumed.
     */
    requestHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    /**
     * The origin the purchase pays (`URL.origin` of the URL its payment is sent to): what the per-origin bound
     * counts (purchase-origin-bound.ts). Absent in records written before it was kept: those count toward none.
     */
    origin: z.string().min(1).max(512).optional(),
    signed: storedSignedSchema.optional(),
  })
  .strict();
export type StoredPurchase = z.infer<typeof storedPurchaseSchema>;

/**
 * A record as a store reads it back (file-purchase-store.ts): every field this version knows is checked as
 * `storedPurchaseSchema` checks it, and a field it does not know — written by a newer buyer sharing the store (an
 * older `xx` reading a newer one's purchases) — is dropped instead of making the record unreadable.
 */
export const readStoredPurchaseSchema = storedPurchaseSchema
  .extend({ signed: storedSignedSchema.strip().optional() })
  .strip();

/** Where purchases are kept, by purchase key. Each call may be asynchronous; each failure is thrown. */
export interface PurchaseStore {
  get(key: string): Promise<StoredPurchase | undefined>;
  put(key: string, purchase: StoredPurchase): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The most purchases a memory store holds at once (live ones: expired ones are forgotten first). */
export const MAX_MEMORY_PURCHASES = 1024;

/** Purchases kept in this process's memory: a retry in this process resumes them. */
export function memoryPurchaseStore(now: () => number = Date.now): PurchaseStore {
  const records = new Map<string, StoredPurchase>();
  return {
    get(key) {
      return Promise.resolve(records.get(key));
    },
    put(key, purchase) {
      const record = storedPurchaseSchema.parse(purchase);
      const t = now();
      const current = records.get(key);
      try {
        if (current === undefined || current.expiresAt <= t) assertOriginHasRoom(records.values(), record, t);
      } catch (err) {
        return Promise.reject(err as Error);
      }
      if (!records.has(key) && records.size >= MAX_MEMORY_PURCHASES) {
        for (const [k, r] of records) if (r.expiresAt <= t) records.delete(k);
        if (records.size >= MAX_MEMORY_PURCHASES)
          return Promise.reject(new PurchaseStoreError(`holds ${MAX_MEMORY_PURCHASES} live purchases`));
      }
      records.set(key, record);
      return Promise.resolve();
    },
    delete(key) {
      records.delete(key);
      return Promise.resolve();
    },
  };
}
