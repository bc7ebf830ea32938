/**
 * Request schemas of the pay path. `payment_requirements` is one x402 `accepts` entry (the wire's schema,
 * narrowed below); fields we do not use are tolerated there and in its `extra` (x402 entries grow new optional
 * fields; a scheme keeps its own in `extra`), each object holding at most MAX_OPEN_KEYS keys in all.
 * Everything else is strict. Amounts and stored text are bounded by ../http/schemas/common-schemas.ts.
 */
import { numberToHex } from 'viem';
import { z } from 'zod';
import { isRawAmount } from '../../../policy/money.js';
import { SOLANA_ADDRESS_RE } from '../../../policy/counterparty-address.js';
import { evmAddressSchema, solanaAddressSchema } from '../../../policy/policy-schema.js';
import { policySignatureFieldsSchema } from '../../../policy/signed-policy.js';
import { rawAmount } from '../../shared/amount-bounds.js';
import {
  paymentRequirementsSchema as wirePaymentRequirementsSchema,
  requirementsExtraSchema,
} from '../../x402/wire-schemas.js';
import { paymentIdentifierSchema } from './payment-identifier-key.js';
import { boundedPolicy, plainText, storedProse, storedString, usdAmount } from '../http/schemas/common-schemas.js';

/** A recipient: a valid address that is not the zero address (USDC refuses it; funds would be lost). */
export const recipientSchema = evmAddressSchema.refine(
  (a) => !/^0x0{40}$/.test(a),
  'the zero address cannot receive payments',
);

export const requestCapabilitySchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9._:\-/]*$/, 'capability: lower-case letters, digits and . _ : - /');

/** Keys an open object of the pay body may hold (known and unknown together): an `accepts` entry, its `extra`. */
export const MAX_OPEN_KEYS = 32;
const withinOpenKeys = (v: object) => Object.keys(v).length <= MAX_OPEN_KEYS;
const OPEN_KEYS_MESSAGE = `at most ${MAX_OPEN_KEYS} keys`;

/** Largest `extra.memo` of a Solana `exact` payment, in UTF-8 bytes (the official x402 client's bound). */
export const MAX_SOLANA_MEMO_BYTES = 256;

/**
 * An address of either family: base58 (a Solana payee, mint or fee payer, kept as spelled) when it is spelled
 * so, else `evm` (refused with its messages). Which family the entry's network asks for is checked below.
 */
const eitherFamily = (evm: z.ZodType<string, string>) =>
  z.string().transform((value, ctx): string => {
    const parsed = (SOLANA_ADDRESS_RE.test(value) ? solanaAddressSchema : evm).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });

/** Each address of the entry in its network's family: 0x on `eip155:`, base58 on `solana:`. */
function addressesOfNetworkFamily(
  r: { network: string; payTo: string; asset: string; extra?: { feePayer?: string | undefined } | undefined },
  ctx: z.RefinementCtx,
): void {
  const solana = r.network.startsWith('solana:');
  const fields: Array<[string, string | undefined]> = [
    ['payTo', r.payTo],
    ['asset', r.asset],
    ...(solana ? [['extra.feePayer', r.extra?.feePayer] as [string, string | undefined]] : []),
  ];
  for (const [field, value] of fields) {
    if (value !== undefined && value.startsWith('0x') === solana)
      ctx.addIssue({
        code: 'custom',
        path: field.split('.'),
        message: solana ? 'expected a base58 Solana address on a solana: network' : 'expected a 0x address',
      });
  }
  if (solana && r.extra?.feePayer === undefined)
    ctx.addIssue({ code: 'custom', path: ['extra', 'feePayer'], message: 'a Solana payment names its fee payer' });
}

/**
 * One x402 `accepts` entry as the wire defines it (src/x402/wire-schemas.ts, the one definition of its shape),
 * narrowed to what this API signs and stores: an EVM or Solana network, a token and a payee of that network's
 * family that can receive (on Solana: base58 of 32 bytes, and the fee payer in `extra.feePayer`, the memo in
 * `extra.memo` of at most MAX_SOLANA_MEMO_BYTES), an amount within MAX_AMOUNT_MICRO, a validity of at most a
 * day, and text its columns can hold (the EIP-712 domain's name and version non-empty, as the signer signs
 * under them). Fields the wire leaves open stay open.
 */
export const paymentRequirementsSchema = wirePaymentRequirementsSchema
  .extend({
    network: z
      .string()
      .regex(
        /^(?:eip155:[1-9][0-9]{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{32})$/,
        'expected a CAIP-2 network such as eip155:84532 or solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      ),
    payTo: eitherFamily(recipientSchema),
    amount: rawAmount,
    asset: eitherFamily(evmAddressSchema),
    extra: requirementsExtraSchema
      .extend({
        name: storedString(64).min(1).optional(),
        version: storedString(16).min(1).optional(),
        feePayer: solanaAddressSchema.optional(),
        memo: storedString(MAX_SOLANA_MEMO_BYTES)
          .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_SOLANA_MEMO_BYTES, 'at most 256 UTF-8 bytes')
          .optional(),
      })
      .refine(withinOpenKeys, OPEN_KEYS_MESSAGE)
      .optional(),
    maxTimeoutSeconds: z.number().int().min(1).max(86_400),
    resource: storedString(2048).optional(),
    description: storedProse(1024).optional(),
    mimeType: storedString(256).optional(),
  })
  .refine(withinOpenKeys, OPEN_KEYS_MESSAGE)
  .superRefine(addressesOfNetworkFamily);

const uintString = z.string().regex(/^(0|[1-9][0-9]{0,15})$/, 'expected a unix time in seconds as a decimal string');

/**
 * Optional terms a caller fixes in the signed message (EIP-3009, or for `upto` the Permit2 nonce, witness
 * validAfter and deadline) (a client that proposes its own nonce and window,
 * e.g. a viem account backed by Treasury). Bounded by the requirements: the window may not outlast
 * maxTimeoutSeconds; the nonce is still UNIQUE per sender.
 */
export const authorizationTermsSchema = z
  .object({
    /** 32 bytes as 0x + 64 hex, or (Permit2 style, for upto) a decimal integer below 2^256; kept as 0x hex. */
    nonce: z
      .union([
        z
          .string()
          .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte hex nonce')
          .transform((v) => v.toLowerCase()),
        z
          .string()
          .refine(isRawAmount, 'expected a decimal nonce below 2^256')
          .transform((v) => numberToHex(BigInt(v), { size: 32 })),
      ])
      .optional(),
    valid_after: uintString.optional(),
    valid_before: uintString.optional(),
  })
  .strict();
export type AuthorizationTerms = z.infer<typeof authorizationTermsSchema>;

/** The longest `challenge_origin`: a scheme, a 253-character host name and a port fit well within it. */
export const MAX_CHALLENGE_ORIGIN_CHARS = 300;

/** `value` is an http(s) origin exactly as `URL.origin` spells it: no path, credentials, default port or upper case. */
function isOriginForm(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * The origin whose 402 asked for a payment (the buyer SDK's `URL.origin` of the URL that answered 402): bounded,
 * an http(s) origin in `URL.origin`'s own spelling (so it is storable text and compares as a string).
 */
export const challengeOriginSchema = storedString(MAX_CHALLENGE_ORIGIN_CHARS).refine(
  isOriginForm,
  'expected an http(s) origin as URL.origin spells it, e.g. https://seller.example',
);

export const payBodySchema = z
  .object({
    payment_requirements: paymentRequirementsSchema,
    capability: requestCapabilitySchema.optional(),
    authorization: authorizationTermsSchema.optional(),
    /**
     * The seller's 402 advertises `extensions.eip2612GasSponsoring`: for an `upto` payment from a wallet
     * without the Permit2 allowance, Treasury also signs the EIP-2612 permit to Permit2 (`eip2612_permit`).
     */
    gas_sponsoring: z.enum(['eip2612']).optional(),
    /**
     * The buyer's x402 `payment-identifier` of this purchase: the payment's Idempotency-Key on this wallet
     * (./payment-identifier-key.ts): the same identifier never signs twice.
     */
    payment_identifier: paymentIdentifierSchema.optional(),
    /**
     * The origin that answered the seller's 402 (optional; the buyer SDK sends it): when the payee is a Treasury
     * seller's, the payment is signed only for that seller's verified origin or its gate's verified address
     * (./challenge-origin-binding.ts: 403 `challenge_origin_not_seller` otherwise). Without it nothing is bound.
     */
    challenge_origin: challengeOriginSchema.optional(),
  })
  .strict();

export const transferBodySchema = z
  .object({
    to: recipientSchema,
    amount_usd: usdAmount,
    valid_for_seconds: z.number().int().min(60).max(86_400).optional(),
  })
  .strict();

export const evaluateBodySchema = z
  .object({
    kind: z.enum(['pay', 'transfer']).default('pay'),
    /** A payee of either family (a Solana wallet's payees are base58). */
    to: eitherFamily(recipientSchema),
    amount_usd: usdAmount,
    capability: requestCapabilitySchema.optional(),
  })
  .strict();

export const putPolicyBodySchema = boundedPolicy;

/**
 * PUT /v1/wallets/{id}/policy/signed: the policy (the same schema as PUT …/policy) with the owner-signed
 * document's version, issued_at and signature (policy/signed-policy.ts; docs/adr/0012-owner-signed-policies.md).
 */
export const putSignedPolicyBodySchema = policySignatureFieldsSchema.extend({ policy: boundedPolicy }).strict();

/** The Idempotency-Key header of the pay and transfer routes (the shared header schema of ../http/schemas/). */
export { idempotencyKeySchema } from '../http/schemas/common-schemas.js';

export { plainText };
export type PaymentRequirements = z.infer<typeof paymentRequirementsSchema>;

/**
 * POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement: the transaction that settled the
 * authorization — an EVM transaction hash (`exact` or `upto`), or a Solana transaction signature (base58, 64 to
 * 88 characters) of a Solana `exact` payment. Which spelling the authorization needs is checked by the service.
 */
export const settlementBodySchema = z
  .object({
    transaction: z
      .string()
      .max(88)
      .regex(
        /^(0x[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/,
        'expected a transaction hash (0x + 64 hex) or a Solana transaction signature (base58)',
      ),
  })
  .strict();
