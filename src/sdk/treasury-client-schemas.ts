/**
 * The zod schemas at the SDK's Treasury boundary: what `TreasuryClient` accepts from its caller (options,
 * pay and transfer inputs) and what it accepts from Treasury (wallet, balance, signed payment). Every type
 * of the client is derived from them.
 *
 * Defends against: a malformed argument reaching the wire (refused before any I/O, naming the field); a
 * Treasury reply of the wrong shape being used — in particular a signature or authorization that is not
 * well-formed hex / decimal. Unknown reply keys are kept (the API grows optional fields).
 * Does not defend against: a well-formed reply with wrong content (the buyer and the viem account compare the
 * signed authorization with what they asked for).
 */
import { z } from 'zod';
import { isUsdString } from '../../policy/money.js';
import {
  bytes32Field,
  evmAddressField,
  uint256Field,
  unixSecondsField,
} from '../shared/api-responses/response-fields.js';
import {
  walletBalanceSchema,
  walletViewSchema as sharedWalletViewSchema,
} from '../shared/api-responses/wallet-responses.js';
import { paymentRequirementsSchema } from '../x402/wire-schemas.js';

/** A 20-byte EVM address, 0x-prefixed (the API's own field schema). */
export const evmAddressSchema = evmAddressField;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
export const fetchSchema = z.custom<FetchLike>((v) => typeof v === 'function', 'expected a fetch function');

/**
 * An object the caller hands in (a `TreasuryClient`, a viem account) that has these methods, and passes
 * `also` when given; only the methods' presence is checked, not what they do.
 */
export function objectWithMethods<T>(
  methods: ReadonlyArray<keyof T & string>,
  message: string,
  also: (value: Record<string, unknown>) => boolean = () => true,
) {
  return z.custom<T>((v) => {
    if (typeof v !== 'object' || v === null) return false;
    const o = v as Record<string, unknown>;
    return methods.every((m) => typeof o[m] === 'function') && also(o);
  }, message);
}

// ---- caller → SDK --------------------------------------------------------------------------------------

export const treasuryClientOptionsSchema = z
  .object({
    /** Treasury base URL, e.g. http://127.0.0.1:8402 (http or https, no credentials in it). */
    apiUrl: z.string().refine((v) => {
      try {
        const u = new URL(v);
        return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
      } catch {
        return false;
      }
    }, 'expected an http(s) URL without credentials'),
    /** A Treasury-capable bearer: PAT (treasury or agent scope) or a Treasury api key. */
    token: z.string().regex(/^[\x21-\x7e]{1,1024}$/, 'expected a bearer token (printable ASCII, no spaces)'),
    fetch: fetchSchema.optional(),
    /** Per call; default 30,000 ms. */
    timeoutMs: z.number().int().min(1).max(600_000).optional(),
    /**
     * How many times a 503 (database or signer briefly out of reach) is retried after its Retry-After, or a
     * failed connection after a short pause: reads always; pay and transfer only with an idempotencyKey, so a
     * retry is the same payment. Default 2.
     */
    unavailableRetries: z.number().int().min(0).max(5).optional(),
  })
  .strict();
export type TreasuryClientOptions = Omit<z.input<typeof treasuryClientOptionsSchema>, 'token'> & {
  token: string | undefined;
};

export const walletIdSchema = z.string().regex(/^wal_[A-Za-z0-9]{1,64}$/, 'expected a wallet id (wal_…)');
export const authorizationIdSchema = z
  .string()
  .regex(/^auth_[A-Za-z0-9]{1,64}$/, 'expected an authorization id (auth_…)');
/** The transaction a settlement report names: an EVM transaction hash, or a Solana transaction signature (base58). */
export const settlementTransactionSchema = z
  .string()
  .max(88)
  .regex(
    /^(0x[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/,
    'expected a transaction hash (0x + 64 hex) or a Solana transaction signature (base58)',
  );
export const idempotencyKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:\-]{1,128}$/, 'expected 1-128 of A-Z a-z 0-9 _ . : -');
export const capabilitySchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._:\-/]{0,127}$/, 'expected a capability such as search.web');

/**
 * Terms the caller fixes in the signed message (nonce, window); Treasury bounds them by maxTimeoutSeconds.
 * The nonce is 32 bytes as hex (EIP-3009) or, for `upto`, Permit2's decimal uint256.
 */
export const authorizationTermsSchema = z
  .object({
    nonce: z.union([bytes32Field, uint256Field]).optional(),
    valid_after: unixSecondsField.optional(),
    valid_before: unixSecondsField.optional(),
  })
  .strict();
export type AuthorizationTerms = z.infer<typeof authorizationTermsSchema>;

/** The longest origin sent as `challengeOrigin` (Treasury's bound: a scheme, a 253-character host and a port fit). */
export const MAX_CHALLENGE_ORIGIN_CHARS = 300;

/** An http(s) origin exactly as `URL.origin` spells it (no path, credentials, default port or upper case). */
export const challengeOriginSchema = z
  .string()
  .max(MAX_CHALLENGE_ORIGIN_CHARS)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === v;
    } catch {
      return false;
    }
  }, 'expected an http(s) origin as URL.origin spells it, e.g. https://seller.example');

export const payInputSchema = z
  .object({
    /** One x402 accepts entry (v2 shape; the older dialect's per-entry resource/description/mimeType allowed). */
    paymentRequirements: paymentRequirementsSchema,
    capability: capabilitySchema.optional(),
    authorization: authorizationTermsSchema.optional(),
    idempotencyKey: idempotencyKeySchema.optional(),
    /** The seller's 402 advertises `eip2612GasSponsoring`: Treasury signs the permit when the wallet has no Permit2 allowance. */
    gasSponsoring: z.enum(['eip2612']).optional(),
    /**
     * The purchase's x402 `payment-identifier` (16 to 128 of `[A-Za-z0-9_-]`): Treasury keys the payment by it on
     * the wallet (the same identifier never signs twice; other terms under it are 409 `payment_identifier_conflict`).
     * Sent as the Idempotency-Key too, so a 503 or a lost answer is retried as this same payment.
     */
    paymentIdentifier: z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,128}$/, 'expected 16 to 128 characters of A-Z a-z 0-9 _ -')
      .optional(),
    /**
     * The origin that answered the seller's 402 (`URL.origin` of the URL the payment goes to): when the payee is a
     * Treasury seller's, Treasury signs only for that seller's own origins (403 `challenge_origin_not_seller`).
     */
    challengeOrigin: challengeOriginSchema.optional(),
  })
  .strict();
export type PayInput = z.input<typeof payInputSchema>;

export const transferInputSchema = z
  .object({
    to: evmAddressSchema,
    amountUsd: z.string().refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "1.25"'),
    /** Validity of the authorization; Treasury's default is 3600 s. */
    validForSeconds: z.number().int().min(60).max(86_400).optional(),
    idempotencyKey: idempotencyKeySchema.optional(),
  })
  .strict();
export type TransferInput = z.input<typeof transferInputSchema>;

// ---- Treasury → SDK ------------------------------------------------------------------------------------

/**
 * A wallet as Treasury answers it (src/shared/api-responses/wallet-responses.ts, the schema the API's wallet
 * views are typed with); `policy` may be null and `policy_state` absent from older servers, and unknown keys are kept.
 */
export const walletViewSchema = sharedWalletViewSchema
  .extend({
    policy: sharedWalletViewSchema.shape.policy.nullable(),
    policy_state: sharedWalletViewSchema.shape.policy_state.optional(),
  })
  .loose();
export type WalletView = z.infer<typeof walletViewSchema>;

/** A page of `GET /v1/wallets`; `next_cursor` is absent from servers that answer in one page. */
export const walletListSchema = z
  .object({ wallets: z.array(walletViewSchema), next_cursor: z.string().max(200).nullable().optional() })
  .loose();

/** A wallet's USDC balance as Treasury answers it (src/shared/api-responses/wallet-responses.ts); unknown keys kept. */
export const balanceSchema = walletBalanceSchema.loose();
export type Balance = z.infer<typeof balanceSchema>;

// The signed payment, the Permit2 witness transfer and the settlement are the API's own reply schemas
// (src/shared/api-responses/pay-responses.ts), shared with the API's OpenAPI document.
export {
  permit2AuthorizationSchema,
  settlementSchema,
  signedPaymentSchema,
  type Permit2Authorization,
  type Settlement,
  type SignedExactPayment,
  type SignedPayment,
} from '../shared/api-responses/pay-responses.js';
export {
  isSolanaPayReply,
  payReplySchema,
  signedSolanaPaymentSchema,
  type PayReply,
  type SignedSolanaPayment,
} from './solana-pay-reply.js';
