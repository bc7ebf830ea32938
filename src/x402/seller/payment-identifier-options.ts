/**
 * The `payment_identifier` option of the seller middleware (and of each gate endpoint's terms), parsed with
 * zod: whether the challenge declares the id `required`, where ids are kept (`memory`, the default; `platform`,
 * PostgreSQL through the seller's PAT; or any object with the store's three methods), how large an answer is
 * kept to replay, and the in-memory store's bounds. Every number is bounded here.
 *
 * Defends against: a seller configuring an unbounded store (entries, bytes, retention) or an answer bound
 * above what any store accepts. Does not defend against: a custom store that does not keep its promises.
 */
import { z } from 'zod';
import { MAX_STORED_ANSWER_BYTES, type PaymentIdentifierStore } from './payment-identifier-store.js';

const storeObject = z.custom<PaymentIdentifierStore>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    ['begin', 'complete', 'release'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  'store must be "memory", "platform" or an object with begin, complete and release',
);

export const paymentIdentifierOptionsSchema = z
  .object({
    /** Declare `required: true`: a payment without an id is refused with 400 `payment_identifier_required`. */
    required: z.boolean().default(false),
    store: z.union([z.enum(['memory', 'platform']), storeObject]).default('memory'),
    /** Largest answer body kept for replay; a larger one keeps only its receipt (a retry gets 410). */
    max_answer_bytes: z.number().int().min(0).max(MAX_STORED_ANSWER_BYTES).default(65_536),
    /** How long an answer is replayed (in-memory store; the platform's window is its own). */
    retention_seconds: z.number().int().min(60).max(604_800).default(3_600),
    /** In-memory store: most entries, and most bytes of stored answers, kept at once. */
    max_entries: z.number().int().min(1).max(1_000_000).default(10_000),
    max_total_bytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(32 * 1024 * 1024),
  })
  .strict();

export type PaymentIdentifierOptions = z.input<typeof paymentIdentifierOptionsSchema>;
export type ResolvedPaymentIdentifier = z.output<typeof paymentIdentifierOptionsSchema>;

/** The option, parsed; what is wrong is appended to `problems` (and the defaults are returned). */
export function checkPaymentIdentifier(value: unknown, problems: string[]): Readonly<ResolvedPaymentIdentifier> {
  const parsed = paymentIdentifierOptionsSchema.safeParse(value ?? {});
  if (parsed.success) return Object.freeze(parsed.data);
  for (const issue of parsed.error.issues)
    problems.push(`payment_identifier${issue.path.map((p) => `.${String(p)}`).join('')}: ${issue.message}`);
  return Object.freeze(paymentIdentifierOptionsSchema.parse({}));
}
