/**
 * What the API answers on a wallet's money routes: the signed payment of POST /v1/wallets/{id}/pay and
 * /transfer (an EIP-3009 authorization for `exact`, a Permit2 witness transfer for `upto`), the recorded
 * `upto` settlement, the policy (GET / PUT …/policy) and the dry run (POST …/policy/evaluate). Defined once
 * here: the buyer SDK parses pay, transfer and settlement replies with these schemas and the OpenAPI document
 * (src/api/http/openapi/) is derived from them.
 *
 * Defends: the server and its clients drifting apart silently; a client acting on a signature or
 * authorization that is not well-formed hex / decimal. Unknown keys are kept on the signed payment and the
 * settlement (the API grows optional fields; an older SDK keeps working). Does not defend: a well-formed reply
 * with wrong content (the buyer and the viem account compare the signed authorization with what they asked for).
 */
import { z } from 'zod';
import { RULE_NAMES } from '../../../policy/policy-types.js';
import { MAX_ISSUED_AT, MAX_POLICY_VERSION } from '../../../policy/signed-policy.js';
import { eip3009AuthorizationSchema } from '../eip3009-authorization.js';
import { policyStateSchema } from './wallet-responses.js';
import {
  bytes32Field,
  evmAddressField,
  rawAmountField,
  signatureField,
  solanaSignatureField,
  uint256Field,
  unixSecondsField,
  walletAddressField,
} from './response-fields.js';

/** Permit2's `TokenPermissions` (its EIP-712 struct): at most `amount` of `token`. */
const tokenPermissionsSchema = z.object({ token: evmAddressField, amount: rawAmountField }).strict();
/** The x402 `upto` witness (EIP-712 `Witness`): the payee, the one facilitator that may settle, the window's start. */
const uptoWitnessSchema = z
  .object({ to: evmAddressField, facilitator: evmAddressField, validAfter: unixSecondsField })
  .strict();

/** `upto`: the Permit2 witness transfer, in the shape of the x402 `permit2Authorization` payload. */
export const permit2AuthorizationSchema = z
  .object({
    from: evmAddressField,
    permitted: tokenPermissionsSchema,
    spender: evmAddressField,
    nonce: uint256Field,
    deadline: unixSecondsField,
    witness: uptoWitnessSchema,
  })
  .strict();
export type Permit2Authorization = z.infer<typeof permit2AuthorizationSchema>;

/**
 * The x402 `eip2612GasSponsoring` info Treasury signed (the buyer adds the seller's declared `description`):
 * an EIP-2612 permit of `from`'s `asset` to canonical Permit2 for `amount` (= the Permit2 maximum).
 */
export const eip2612PermitSchema = z
  .object({
    from: evmAddressField,
    asset: evmAddressField,
    spender: evmAddressField,
    amount: rawAmountField,
    nonce: uint256Field,
    deadline: unixSecondsField,
    signature: signatureField,
    version: z.literal('1'),
  })
  .strict();
export type Eip2612Permit = z.infer<typeof eip2612PermitSchema>;

/** What is left under each policy limit (after this payment when it is allowed); policy/'s `Headroom`. */
export const headroomSchema = z.object({
  per_tx_usd: z.string().optional(),
  daily_usd: z.string().optional(),
  weekly_usd: z.string().optional(),
  monthly_usd: z.string().optional(),
  /** Payments left in the velocity window. */
  velocity_remaining: z.number().int().optional(),
  /** Seconds until the next payment may be signed (after this one when allowed). */
  cooling_off_remaining_seconds: z.number().int().optional(),
});

/** One violated policy rule; `message` is for humans and not stable, rule-specific fields ride along. */
export const violationSchema = z
  .object({
    rule: z.enum(RULE_NAMES),
    message: z.string(),
    limit: z.string().optional(),
    attempted: z.string().optional(),
  })
  .catchall(z.unknown());

const signedPaymentCommon = {
  signature: signatureField,
  authorization_id: z.string(),
  decision_id: z.string(),
  wallet_id: z.string(),
  network: z.string(),
  asset: evmAddressField,
  amount_usd: z.string(),
  headroom: headroomSchema.optional(),
};

/**
 * A Solana `exact` transfer as signed: the transaction message (base64) the wallet signed, what it moves, its
 * SHA-256 (the authorization's nonce and the facilitator's settlement key) and its window.
 */
export const solanaTransferSchema = z
  .object({
    from: walletAddressField,
    to: walletAddressField,
    amount: rawAmountField,
    fee_payer: walletAddressField,
    message: z.string().min(4).max(1644),
    message_hash: bytes32Field,
    valid_after: unixSecondsField,
    valid_before: unixSecondsField,
  })
  .strict();

/**
 * The pay reply of a Solana wallet: the wallet's base58 signature, the transfer it signed, and `transaction`,
 * the base64 wire transaction (fee-payer slot empty) that the x402 payload `{ transaction }` carries. Apart
 * from `signedPaymentSchema` so that EVM clients typed on that one keep their narrowing.
 */
export const solanaSignedPaymentSchema = z
  .object({
    scheme: z.literal('exact'),
    solana_transfer: solanaTransferSchema,
    transaction: z.string().min(1),
    ...signedPaymentCommon,
    signature: solanaSignatureField,
    asset: walletAddressField,
  })
  .loose();
export type SolanaSignedPayment = z.infer<typeof solanaSignedPaymentSchema>;

/**
 * The pay and transfer reply of an EVM wallet: Treasury's 65-byte signature over the EIP-3009 authorization
 * (`exact`; `scheme` absent from older servers) or over the Permit2 witness transfer (`upto`).
 */
export const signedPaymentSchema = z.union([
  z
    .object({
      scheme: z.literal('exact').optional(),
      authorization: eip3009AuthorizationSchema,
      ...signedPaymentCommon,
    })
    .loose(),
  z
    .object({
      scheme: z.literal('upto'),
      permit2_authorization: permit2AuthorizationSchema,
      /** Asked for with `gas_sponsoring: "eip2612"` and the wallet had no Permit2 allowance: the EIP-2612 permit. */
      eip2612_permit: eip2612PermitSchema.optional(),
      ...signedPaymentCommon,
    })
    .loose(),
]);
export type SignedPayment = z.infer<typeof signedPaymentSchema>;
export type SignedExactPayment = Extract<SignedPayment, { authorization: unknown }>;

/**
 * What Treasury recorded for a settlement (POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement):
 * for `exact` the whole signed value settled (`settled_usd` = `signed_max_usd`, nothing given back).
 */
export const settlementSchema = z
  .object({
    authorization_id: z.string(),
    wallet_id: z.string(),
    scheme: z.enum(['exact', 'upto']),
    network: z.string(),
    transaction: z.string(),
    signed_max_usd: z.string(),
    settled_usd: z.string(),
    given_back_usd: z.string(),
    settled_at: z.string(),
    /** True when this settlement had been recorded before (the same transaction reported again). */
    replayed: z.boolean(),
  })
  .loose();
export type Settlement = z.infer<typeof settlementSchema>;

/**
 * What the signer holds for a wallet (docs/adr/0012-owner-signed-policies.md), read from it: who may sign the
 * wallet's policy and the signed document it enforces (all null: none yet). `next_version` is what the next
 * document must carry (the current version + 1, or 1).
 */
export const ownerPolicySchema = z.object({
  state: policyStateSchema,
  authority: z
    .object({
      kind: z.enum(['owner', 'approver', 'first_signer']),
      /** 0x for an EVM owner or approver; base58 for an owner who signed in with Solana. */
      address: z
        .union([evmAddressField, z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'expected a base58 Solana key')])
        .nullable(),
    })
    .nullable(),
  version: z.number().int().min(1).max(MAX_POLICY_VERSION).nullable(),
  policy_hash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .nullable(),
  issued_at: z.number().int().min(0).max(MAX_ISSUED_AT).nullable(),
  /** One above the current version; at most MAX_POLICY_VERSION + 1 (then no document can follow). */
  next_version: z
    .number()
    .int()
    .min(1)
    .max(MAX_POLICY_VERSION + 1),
});
export type OwnerPolicy = z.infer<typeof ownerPolicySchema>;

/**
 * GET and PUT /v1/wallets/{id}/policy (and PUT …/policy/signed): the wallet's policy as stored
 * (docs/adr/0003-policy-engine.md) and what the signer holds of it.
 */
export const walletPolicySchema = z.object({
  wallet_id: z.string(),
  policy: z.record(z.string(), z.unknown()),
  owner_policy: ownerPolicySchema,
});
export type WalletPolicy = z.infer<typeof walletPolicySchema>;

/** POST /v1/wallets/{id}/policy/evaluate: what the policy would decide; nothing is signed or counted. */
export const policyEvaluationSchema = z.object({
  wallet_id: z.string(),
  allowed: z.boolean(),
  /** Every violated rule, in the policy's rule order; empty when allowed. */
  violations: z.array(violationSchema),
  headroom: headroomSchema,
  dry_run: z.literal(true),
});
export type PolicyEvaluation = z.infer<typeof policyEvaluationSchema>;
