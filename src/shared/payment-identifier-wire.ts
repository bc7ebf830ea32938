/**
 * The x402 `payment-identifier` store's wire shapes, defined once: the paywall's store interface
 * (src/x402/seller/payment-identifier-store.ts), the platform client (…/payment-identifier-platform-store.ts)
 * and the API's routes (src/api/sellers/payment-ids/) all parse these. Every string and number is bounded.
 *
 * Defends: a stored answer, id, route or fingerprint of a size or alphabet the platform's table cannot hold
 * (or that would come back as something else: a header value with CR/LF, a route with control or bidi
 * characters) being sent or accepted; a reply of the wrong shape being trusted by the paywall. Does not defend: what an
 * answer says (the paywall built it from a settled payment).
 */
import { z } from 'zod';
import { endpointIdField } from './api-responses/response-fields.js';

/** The largest stored body (the API's default request body limit is 1 MiB; base64 grows it by a third). */
export const MAX_STORED_ANSWER_BYTES = 262_144;

/** The buyer's id, as the extension defines it: 16–128 characters of [A-Za-z0-9_-]. */
export const paymentIdSchema = z
  .string()
  .min(16)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/);

/** A sha256 hex fingerprint (src/x402/seller/payment-identifier-fingerprint.ts). */
export const fingerprintSchema = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * The path an id was used on (as the paywall reads it — a request path, so printable ASCII, its other bytes
 * percent-encoded; not necessarily a route pattern): stored and indexed, so no control, format or non-ASCII
 * character, and short enough for the index.
 */
export const paymentIdRouteSchema = z
  .string()
  .min(1)
  .max(2048)
  .regex(/^\/[\x21-\x7e]*$/, 'expected a request path: "/" then printable ASCII');

/** A stored header's value: printable ASCII, spaces and tabs (never CR or LF, which would split it when sent). */
const storedHeaderValue = z
  .string()
  .max(4096)
  .regex(/^[\x20-\x7e\t]*$/, 'expected printable ASCII');

/** The answer replayed to a retry: what the buyer got, the receipt headers included. */
export const storedAnswerSchema = z
  .object({
    status: z.number().int().min(200).max(599),
    /**
     * Lower-case header names; at most 8 (content-type, cache-control, the two receipt headers). An own
     * `__proto__` key is refused: zod's record would drop it silently and store what was not sent.
     */
    headers: z.preprocess(
      (raw) => (raw !== null && typeof raw === 'object' && Object.hasOwn(raw, '__proto__') ? Symbol('refused') : raw),
      z
        .record(z.string().regex(/^[a-z0-9-]{1,64}$/), storedHeaderValue)
        .refine((h) => Object.keys(h).length <= 8, 'at most 8 headers'),
    ),
    /** The body, base64; absent when it was too large to keep (the retry gets 410 with the receipt). */
    body_base64: z
      .string()
      .max(Math.ceil(MAX_STORED_ANSWER_BYTES / 3) * 4)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/)
      .optional(),
  })
  .strict();

export type StoredAnswer = z.infer<typeof storedAnswerSchema>;

const keyFields = {
  /**
   * The gate names the endpoint whose seller the id belongs to (an `ep_` id); the middleware's seller is its
   * PAT's, and it names none, but an id of any other spelling is refused on both routes all the same.
   */
  endpoint_id: endpointIdField.optional(),
  route: paymentIdRouteSchema,
  id: paymentIdSchema,
  fingerprint: fingerprintSchema,
};

export const paymentIdBeginBodySchema = z
  .object({ ...keyFields, pending_ttl_seconds: z.number().int().min(1).max(86_400) })
  .strict();
export const paymentIdCompleteBodySchema = z.object({ ...keyFields, answer: storedAnswerSchema }).strict();
export const paymentIdReleaseBodySchema = z.object(keyFields).strict();

export const paymentIdBeginReplySchema = z
  .object({
    outcome: z.enum(['new', 'in_flight', 'conflict', 'stored']),
    answer: storedAnswerSchema.optional(),
  })
  .strict()
  .refine((r) => (r.outcome === 'stored') === (r.answer !== undefined), 'a stored outcome carries its answer');
export const paymentIdDoneReplySchema = z.object({ done: z.boolean() }).strict();

export type PaymentIdBeginBody = z.infer<typeof paymentIdBeginBodySchema>;
export type PaymentIdCompleteBody = z.infer<typeof paymentIdCompleteBodySchema>;
export type PaymentIdReleaseBody = z.infer<typeof paymentIdReleaseBodySchema>;
export type PaymentIdBeginReply = z.infer<typeof paymentIdBeginReplySchema>;
