/**
 * x402 wire shapes as zod schemas; every TypeScript type of the x402 layer is derived from them.
 *
 * We speak a superset of both x402 dialects (docs/adr/0004-x402-wire-and-koa-middleware.md): challenges carry the
 * top-level `resource` object and, per accepts entry, `resource`/`description`/`mimeType`; payments come as v2
 * (`accepted` + `payload`) or v1 (`scheme` + `network` + `payload`); receipts carry both `transaction` and
 * `txHash`; facilitator settle replies may use either spelling and are normalised to one shape.
 *
 * Defends against: malformed numbers (amounts and times are base-10 integer strings without sign or leading
 * zeros, below 2^256), malformed EVM addresses, nonces and signatures, unbounded arrays and strings.
 * Unknown keys are kept on the loose objects (x402 messages grow optional fields) but prototype keys never get
 * here (safe-json.ts refuses them).
 * Does not defend against: semantic mismatches (a payment for another price or payee) — the seller middleware
 * compares a decoded payment with its own requirements.
 */
import { z } from 'zod';
import { isRawAmount } from '../../policy/money.js';
import { eip3009AuthorizationSchema } from '../shared/eip3009-authorization.js';

const text = (max: number) => z.string().max(max);
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
/** An address on any chain: EVM hex, or another chain's base58/bech32 spelling. Bounded, printable ASCII. */
const anyAddress = z.string().regex(/^[A-Za-z0-9:_.-]{1,128}$/, 'expected an address');
const rawAmount = z
  .string()
  .refine(isRawAmount, 'expected a raw token amount (base-10 integer string, no sign or leading zeros)');
const uintString = rawAmount;
const signatureHex = z
  .string()
  .regex(/^0x(?:[0-9a-fA-F]{2}){65,4096}$/, 'expected a 0x-prefixed hex signature of at least 65 bytes');

/** CAIP-2 chain id; for `eip155` a positive decimal chain id without leading zeros and at most 16 digits. */
export const caip2NetworkSchema = z
  .string()
  .regex(
    /^(?:eip155:[1-9][0-9]{0,15}|(?!eip155:)[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32})$/,
    'expected a CAIP-2 network such as eip155:84532',
  );
/** v1 network names (`base-sepolia`) or, leniently, a CAIP-2 id. */
export const v1NetworkSchema = z.union([
  z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'expected a v1 network name'),
  caip2NetworkSchema,
]);
export const schemeNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'expected a scheme name such as "exact"');

export const requirementsExtraSchema = z
  .object({
    name: text(64).optional(),
    version: text(16).optional(),
    facilitatorAddress: evmAddress.optional(),
  })
  .loose();

/** What a paid resource says of itself: on the challenge's `resource`, and per accepts entry in the older dialect. */
const resourceDescription = { description: text(1024).optional(), mimeType: text(256).optional() };

export const resourceInfoSchema = z.object({ url: z.string().min(1).max(2048), ...resourceDescription }).loose();

/** One `accepts` entry (v2 names; the older dialect adds resource/description/mimeType per entry). */
export const paymentRequirementsSchema = z
  .object({
    scheme: schemeNameSchema,
    network: caip2NetworkSchema,
    payTo: anyAddress,
    amount: rawAmount,
    asset: anyAddress,
    extra: requirementsExtraSchema.optional(),
    maxTimeoutSeconds: z.number().int().min(1).max(2_592_000),
    resource: text(2048).optional(),
    ...resourceDescription,
  })
  .loose();

/** The 402 challenge (`PAYMENT-REQUIRED` / `X-PAYMENT-REQUIRED` header and 402 body). */
export const paymentRequiredSchema = z
  .object({
    x402Version: z.literal(2),
    error: text(1024).optional(),
    resource: resourceInfoSchema,
    accepts: z.array(paymentRequirementsSchema).min(1).max(16),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/** EIP-3009 TransferWithAuthorization message as x402 `exact` carries it: one schema, shared with the API's replies. */
export { eip3009AuthorizationSchema };

export const exactEvmPayloadSchema = z
  .object({ signature: signatureHex, authorization: eip3009AuthorizationSchema })
  .strict();

/** `upto` (and `exact` via Permit2): the Permit2 witness transfer. Only the fields we key on are checked. */
export const permit2EvmPayloadSchema = z
  .object({
    signature: signatureHex,
    permit2Authorization: z.object({ from: evmAddress, nonce: uintString }).loose(),
  })
  .loose();

export const evmPayloadSchema = z.union([exactEvmPayloadSchema, permit2EvmPayloadSchema]);

/**
 * `exact` on Solana: the buyer's partially signed transaction, base64 of its wire bytes (a Solana transaction
 * is at most 1,232 bytes, so at most 1,644 base64 characters). Its content is decoded and checked by the seller
 * (./seller/svm-payment.ts) and the facilitator.
 */
export const svmPayloadSchema = z
  .object({
    transaction: z
      .string()
      .min(4)
      .max(1644)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'expected a base64 transaction'),
  })
  .strict();

/** What a payment carries: an EVM authorization, or a Solana transaction. */
export const paymentBodySchema = z.union([exactEvmPayloadSchema, permit2EvmPayloadSchema, svmPayloadSchema]);

export const paymentPayloadV2Schema = z
  .object({
    x402Version: z.literal(2),
    resource: resourceInfoSchema.optional(),
    accepted: paymentRequirementsSchema,
    payload: paymentBodySchema,
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

export const paymentPayloadV1Schema = z
  .object({
    x402Version: z.literal(1),
    scheme: schemeNameSchema,
    network: v1NetworkSchema,
    payload: evmPayloadSchema,
  })
  .loose();

/** The buyer's payment (`PAYMENT-SIGNATURE` or `X-PAYMENT` header). */
export const paymentPayloadSchema = z.discriminatedUnion('x402Version', [
  paymentPayloadV1Schema,
  paymentPayloadV2Schema,
]);

/**
 * What a settlement names, with one set of bounds: the facilitator's settle reply says it and the seller's
 * receipt passes it on, so a reply within these bounds always makes a receipt within them.
 */
const settlementFields = {
  transaction: text(256),
  txHash: text(256),
  network: text(64),
  payer: text(128),
  errorReason: text(256),
};

/** Every field of `shape` may also be absent or null. */
function nullishFields<S extends Record<string, z.ZodType>>(shape: S) {
  return Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, field.nullish()])) as {
    [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>>;
  };
}

/**
 * The receipt (`PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`): `network` always, the rest when known. Decoding
 * accepts either `transaction` or `txHash` (official servers send only the former) and yields both.
 */
export const settlementReceiptSchema = z
  .object({ success: z.boolean(), ...settlementFields })
  .partial({ transaction: true, txHash: true, payer: true, errorReason: true })
  .loose()
  .refine((r) => r.transaction !== undefined || r.txHash !== undefined, 'a receipt carries transaction or txHash')
  .refine(
    (r) => r.transaction === undefined || r.txHash === undefined || r.transaction === r.txHash,
    'transaction and txHash differ',
  )
  // Object.assign rather than `{ ...r, … }` (a literal that starts with a spread is slow on Node 20).
  .transform((r) =>
    Object.assign({}, r, { transaction: (r.transaction ?? r.txHash)!, txHash: (r.txHash ?? r.transaction)! }),
  );

/** Facilitator `POST /verify` reply. */
export const facilitatorVerifyReplySchema = z
  .object({
    isValid: z.boolean(),
    invalidReason: text(256).nullish(),
    invalidMessage: text(1024).nullish(),
    payer: text(128).nullish(),
  })
  .loose();

/**
 * Facilitator `POST /settle` reply: `{success, txHash}` (spec) or `{success, transaction, network}` (official),
 * normalised to `{success, transaction, network?, payer?, errorReason?, errorMessage?, amount?}`. A success
 * without a transaction hash is refused (it would be a receipt for nothing) unless it settled `amount: "0"`
 * (an `upto` payment charged nothing: no transaction is sent).
 */
export const facilitatorSettleReplySchema = z
  .object({
    success: z.boolean(),
    ...nullishFields(settlementFields),
    errorMessage: text(1024).nullish(),
    amount: text(80).nullish(),
  })
  .loose()
  .refine(
    (r) => !r.success || Boolean(r.transaction || r.txHash) || r.amount === '0',
    'a successful settlement names its transaction',
  )
  .refine((r) => !(r.transaction && r.txHash) || r.transaction === r.txHash, 'transaction and txHash differ')
  .transform((r) => ({
    success: r.success,
    transaction: r.transaction || r.txHash || '',
    network: r.network ?? undefined,
    payer: r.payer ?? undefined,
    errorReason: r.errorReason ?? undefined,
    errorMessage: r.errorMessage ?? undefined,
    amount: r.amount ?? undefined,
  }));

/** Facilitator `GET /supported` reply. */
export const facilitatorSupportedReplySchema = z
  .object({
    kinds: z
      .array(
        z
          .object({
            x402Version: z.number().int(),
            scheme: z.string().max(64),
            network: z.string().max(128),
            extra: z.record(z.string(), z.unknown()).optional(),
          })
          .loose(),
      )
      .max(1024),
    extensions: z.array(z.string().max(256)).max(1024).optional(),
    signers: z.record(z.string(), z.array(z.string().max(256)).max(256)).optional(),
  })
  .loose();

export type PaymentRequirements = z.infer<typeof paymentRequirementsSchema>;
export type PaymentRequired = z.infer<typeof paymentRequiredSchema>;
export type ResourceInfo = z.infer<typeof resourceInfoSchema>;
export type Eip3009Authorization = z.infer<typeof eip3009AuthorizationSchema>;
export type ExactEvmPayload = z.infer<typeof exactEvmPayloadSchema>;
export type Permit2EvmPayload = z.infer<typeof permit2EvmPayloadSchema>;
export type SvmPayload = z.infer<typeof svmPayloadSchema>;
export type PaymentPayloadV1 = z.infer<typeof paymentPayloadV1Schema>;
export type PaymentPayloadV2 = z.infer<typeof paymentPayloadV2Schema>;
export type PaymentPayload = z.infer<typeof paymentPayloadSchema>;
export type SettlementReceipt = z.infer<typeof settlementReceiptSchema>;
export type SettlementReceiptInput = z.input<typeof settlementReceiptSchema>;
export type FacilitatorVerifyReply = z.infer<typeof facilitatorVerifyReplySchema>;
export type FacilitatorSettleReply = z.infer<typeof facilitatorSettleReplySchema>;
export type FacilitatorSupportedReply = z.infer<typeof facilitatorSupportedReplySchema>;
