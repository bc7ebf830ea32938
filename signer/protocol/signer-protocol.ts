/**
 * The wire contract between treasury-api and treasury-signer (protocol version 1).
 *
 * Purpose: the only module of signer/ that the front (src/) imports. It defines every request and
 * reply the signer understands, as zod schemas from which the TypeScript types are derived.
 *
 * What it defends: the signer parses every frame with these schemas before acting; unknown
 * methods, extra fields, wrong types, oversize values and free text the API's stored-text rule refuses
 * (base/storable-text.ts: in an EIP-712 domain's name and version, an owner's sign-in message) are refused with a
 * stable error code (`invalid_request`).
 * There is deliberately no "sign this digest" method: the signing methods take a structured
 * EIP-3009 TransferWithAuthorization, a structured Permit2 PermitWitnessTransferFrom carrying the x402
 * `upto` witness, or a structured EIP-2612 Permit whose spender must be Permit2 (x402
 * `eip2612GasSponsoring`) — domain + message — and the signer computes the digest itself.
 * On Solana the message itself is the signed payload: `sign_solana_transaction` takes the message bytes,
 * decodes them, and signs only the x402 `exact` shape (./solana-protocol.ts lists its refusal rules).
 *
 * No message changes the signer's limits: there is no method for it, and every params object is strict. A
 * wallet's policy changes only by a document its authority signed (./owner-policy-protocol.ts). Besides payments, a
 * wallet key signs a policy receipt (`attest_wallet_policy`): a text the signer builds itself from its own store, as
 * an EIP-191 personal message (a Solana wallet's key: as a Solana off-chain message, whose `\xffsolana offchain`
 * signing domain no transaction message begins with), so it can be no transaction, typed data or sign-in.
 *
 * What it does not defend: who may ask. Whoever can open the unix socket (mode 0600, owned by the
 * signer's user) can ask for signatures within the signer's static invariants and its own per-wallet
 * limits; spend policy lives in the front. The front's pay order (docs/architecture.md, docs/adr/0006):
 * decide on a snapshot of the wallet (the policy checked, the nonce fixed), sign, record the authorization
 * with its signature, spend and audit row — and release the signature to its caller only after that record
 * committed. A payment written before it is signed (the locked path, a resumed reservation) is recorded
 * again with its signature before release. A signature whose record fails is never released: its payment is
 * written unsigned and given back. The signer sees none of this order; it signs what it is asked within its
 * own limits, so the order holds only as long as the front keeps it.
 */
import { z } from 'zod';
import { addressSchema, bytes32Schema, hex, keyRefSchema, uint256StringSchema, wireText } from './wire-primitives.js';
import {
  attestWalletPolicyParamsSchema,
  attestWalletPolicyResultSchema,
  authorityRequestSchema,
  getWalletPolicyParamsSchema,
  getWalletPolicyResultSchema,
  policyAuthoritySchema,
  setWalletPolicyParamsSchema,
  setWalletPolicyResultSchema,
} from './owner-policy-protocol.js';
import {
  signSolanaTransactionResultSchema,
  solanaAddressSchema,
  solanaMessageSchema,
  solanaNetworkSchema,
} from './solana-protocol.js';

export * from './owner-policy-protocol.js';
export * from './signer-error-protocol.js';
export * from './solana-protocol.js';
export * from './wire-primitives.js';

export const SIGNER_PROTOCOL_VERSION = 1 as const;
/** Largest frame either side accepts, in bytes (payload, excluding the 4-byte length prefix): room for a signed policy at its list bounds (two lists of 1,000 addresses). */
export const MAX_FRAME_BYTES = 256 * 1024;

const requestIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_\-.:]+$/);

/** An EIP-712 domain's chain id: a positive integer that a JSON number holds exactly. */
const chainIdSchema = z
  .number()
  .int()
  .positive()
  .max(2 ** 53 - 1);

/** A token's EIP-712 domain; its name and version are one line of storable text (./wire-primitives.ts `wireText`). */
export const eip712DomainSchema = z
  .object({
    name: wireText(64),
    version: wireText(16),
    chainId: chainIdSchema,
    verifyingContract: addressSchema,
  })
  .strict();

export const transferWithAuthorizationSchema = z
  .object({
    from: addressSchema,
    to: addressSchema,
    value: uint256StringSchema,
    validAfter: uint256StringSchema,
    validBefore: uint256StringSchema,
    nonce: bytes32Schema,
  })
  .strict();

/** Permit2's EIP-712 domain has no version. */
export const permit2DomainSchema = z
  .object({
    name: z.literal('Permit2'),
    chainId: chainIdSchema,
    verifyingContract: addressSchema,
  })
  .strict();

/**
 * Permit2 `PermitWitnessTransferFrom` with the x402 `upto` witness `{to, facilitator, validAfter}`: the
 * spender (the x402 upto proxy) may move at most `permitted.amount` of `permitted.token` from the wallet
 * to `witness.to`, once (Permit2 nonce), before `deadline`, and only when called by `witness.facilitator`.
 */
export const permit2WitnessTransferSchema = z
  .object({
    permitted: z.object({ token: addressSchema, amount: uint256StringSchema }).strict(),
    spender: addressSchema,
    nonce: uint256StringSchema,
    deadline: uint256StringSchema,
    witness: z.object({ to: addressSchema, facilitator: addressSchema, validAfter: uint256StringSchema }).strict(),
  })
  .strict();

/**
 * EIP-2612 `Permit` (x402 `eip2612GasSponsoring`): the token lets `spender` move up to `value` of `owner`'s
 * tokens; `nonce` is the token's `nonces(owner)`. The signer signs it only for the wallet itself as owner
 * and the configured Permit2 as spender (signer/assert.ts).
 */
export const eip2612PermitSchema = z
  .object({
    owner: addressSchema,
    spender: addressSchema,
    value: uint256StringSchema,
    nonce: uint256StringSchema,
    deadline: uint256StringSchema,
  })
  .strict();

export const healthParamsSchema = z.object({}).strict();
/** `authority`: who may set the policies of the account's wallets (./owner-policy-protocol.ts); none, none. */
export const createAccountKeyParamsSchema = z.object({ authority: authorityRequestSchema.optional() }).strict();
/** The curve of a wallet key: secp256k1 (EVM wallets, the default) or Ed25519 (Solana wallets). */
export const walletKeyCurveSchema = z.enum(['secp256k1', 'ed25519']);
export const createWalletKeyParamsSchema = z
  .object({ account_key_ref: keyRefSchema, curve: walletKeyCurveSchema.optional() })
  .strict();
export const signTransferAuthorizationParamsSchema = z
  .object({
    account_key_ref: keyRefSchema,
    wallet_key_ref: keyRefSchema,
    /** The wallet's address as the front stored it; the signature must recover to it. */
    address: addressSchema,
    domain: eip712DomainSchema,
    message: transferWithAuthorizationSchema,
  })
  .strict();
export const signPermit2WitnessTransferParamsSchema = z
  .object({
    account_key_ref: keyRefSchema,
    wallet_key_ref: keyRefSchema,
    /** The wallet's address (the Permit2 owner); the signature must recover to it. */
    address: addressSchema,
    domain: permit2DomainSchema,
    message: permit2WitnessTransferSchema,
  })
  .strict();
export const signEip2612PermitParamsSchema = z
  .object({
    account_key_ref: keyRefSchema,
    wallet_key_ref: keyRefSchema,
    /** The wallet's address (the permit's owner); the signature must recover to it. */
    address: addressSchema,
    /** The token's own EIP-712 domain (USDC: name, version, chain, the token contract). */
    domain: eip712DomainSchema,
    message: eip2612PermitSchema,
  })
  .strict();
/**
 * A Solana transaction message (legacy or v0) for the wallet to sign as the payer of an x402 `exact`
 * payment; the signer signs only that shape (./solana-protocol.ts lists its refusal rules).
 */
export const signSolanaTransactionParamsSchema = z
  .object({
    account_key_ref: keyRefSchema,
    wallet_key_ref: keyRefSchema,
    /** The wallet's base58 address; the signature must verify under it. */
    address: solanaAddressSchema,
    network: solanaNetworkSchema,
    /** The message bytes, base64. */
    message: solanaMessageSchema,
    /** The payee: when given, the transfer's destination must be its associated token account for the mint. */
    pay_to: solanaAddressSchema.optional(),
  })
  .strict();
export const destroyWalletKeyParamsSchema = z
  .object({
    account_key_ref: keyRefSchema,
    wallet_key_ref: keyRefSchema,
    /**
     * The wallet's address (0x, or base58 for a Solana key). Required by a signer that keeps a policy store: it
     * proves the key is that address's and destroys it only if the wallet's owner-signed policy, if any, allows
     * it (`allow_key_destruction`); refused with `key_destruction_not_allowed` otherwise.
     */
    address: z.union([addressSchema, solanaAddressSchema]).optional(),
  })
  .strict();

/** One request: the envelope (version, id) and one method's params. */
const requestOf = <M extends string, P extends z.ZodTypeAny>(method: M, params: P) =>
  z.object({ v: z.literal(1), id: requestIdSchema, method: z.literal(method), params }).strict();

export const signerRequestSchema = z.discriminatedUnion('method', [
  requestOf('health', healthParamsSchema),
  requestOf('create_account_key', createAccountKeyParamsSchema),
  requestOf('create_wallet_key', createWalletKeyParamsSchema),
  requestOf('sign_transfer_authorization', signTransferAuthorizationParamsSchema),
  requestOf('sign_permit2_witness_transfer', signPermit2WitnessTransferParamsSchema),
  requestOf('sign_eip2612_permit', signEip2612PermitParamsSchema),
  requestOf('sign_solana_transaction', signSolanaTransactionParamsSchema),
  requestOf('destroy_wallet_key', destroyWalletKeyParamsSchema),
  requestOf('set_wallet_policy', setWalletPolicyParamsSchema),
  requestOf('get_wallet_policy', getWalletPolicyParamsSchema),
  requestOf('attest_wallet_policy', attestWalletPolicyParamsSchema),
]);

export const healthResultSchema = z
  .object({ status: z.literal('ok'), backend: z.enum(['pkcs11', 'aws-kms']), protocol_version: z.literal(1) })
  .strict();
export const createAccountKeyResultSchema = z
  .object({ account_key_ref: keyRefSchema, authority: policyAuthoritySchema.nullable() })
  .strict();
export const createWalletKeyResultSchema = z.union([
  z
    .object({
      wallet_key_ref: keyRefSchema,
      /** Uncompressed SEC1 public key, 0x04‖X‖Y. */
      public_key: hex(65),
      /** EIP-55 checksummed address derived from public_key. */
      address: addressSchema,
      /**
       * Who may sign the wallet's policies, as the signer recorded it: its account's, or the approver when the store
       * has no authority for the account (made before it kept them); null when the signer keeps no store.
       */
      policy_authority: policyAuthoritySchema.nullable(),
    })
    .strict(),
  z
    .object({
      wallet_key_ref: keyRefSchema,
      curve: z.literal('ed25519'),
      /** The raw 32-byte Ed25519 public key. */
      public_key: hex(32),
      /** Base58 of public_key. */
      address: solanaAddressSchema,
      /**
       * Who may sign the wallet's policies, as the signer recorded it: its account's, or the approver when the store
       * has no authority for the account (made before it kept them); null when the signer keeps no store.
       */
      policy_authority: policyAuthoritySchema.nullable(),
    })
    .strict(),
]);
export const signTransferAuthorizationResultSchema = z
  .object({
    /** 65-byte r‖s‖v signature, v ∈ {27, 28}, s in the lower half of the curve order. */
    signature: hex(65),
    r: bytes32Schema,
    s: bytes32Schema,
    v: z.union([z.literal(27), z.literal(28)]),
    /** The EIP-712 digest the signer computed and signed. */
    digest: bytes32Schema,
  })
  .strict();
export const destroyWalletKeyResultSchema = z.object({ destroyed: z.literal(true) }).strict();

export type SignerRequest = z.infer<typeof signerRequestSchema>;
export type SignerMethod = SignerRequest['method'];
export type Eip712Domain = z.infer<typeof eip712DomainSchema>;
export type TransferWithAuthorization = z.infer<typeof transferWithAuthorizationSchema>;
export type SignTransferAuthorizationParams = z.infer<typeof signTransferAuthorizationParamsSchema>;
export type Permit2Domain = z.infer<typeof permit2DomainSchema>;
export type Permit2WitnessTransfer = z.infer<typeof permit2WitnessTransferSchema>;
export type SignPermit2WitnessTransferParams = z.infer<typeof signPermit2WitnessTransferParamsSchema>;
export type Eip2612Permit = z.infer<typeof eip2612PermitSchema>;
export type SignEip2612PermitParams = z.infer<typeof signEip2612PermitParamsSchema>;
export type HealthResult = z.infer<typeof healthResultSchema>;
export type CreateAccountKeyResult = z.infer<typeof createAccountKeyResultSchema>;
export type CreateWalletKeyResult = z.infer<typeof createWalletKeyResultSchema>;
export type SignTransferAuthorizationResult = z.infer<typeof signTransferAuthorizationResultSchema>;
export type SignSolanaTransactionParams = z.infer<typeof signSolanaTransactionParamsSchema>;
export type DestroyWalletKeyResult = z.infer<typeof destroyWalletKeyResultSchema>;

/** Params and result schema per method, so client and server stay in lock-step. */
export const SIGNER_METHODS = {
  health: { params: healthParamsSchema, result: healthResultSchema },
  create_account_key: { params: createAccountKeyParamsSchema, result: createAccountKeyResultSchema },
  create_wallet_key: { params: createWalletKeyParamsSchema, result: createWalletKeyResultSchema },
  sign_transfer_authorization: {
    params: signTransferAuthorizationParamsSchema,
    result: signTransferAuthorizationResultSchema,
  },
  sign_permit2_witness_transfer: {
    params: signPermit2WitnessTransferParamsSchema,
    result: signTransferAuthorizationResultSchema,
  },
  sign_eip2612_permit: { params: signEip2612PermitParamsSchema, result: signTransferAuthorizationResultSchema },
  sign_solana_transaction: {
    params: signSolanaTransactionParamsSchema,
    result: signSolanaTransactionResultSchema,
  },
  destroy_wallet_key: { params: destroyWalletKeyParamsSchema, result: destroyWalletKeyResultSchema },
  set_wallet_policy: { params: setWalletPolicyParamsSchema, result: setWalletPolicyResultSchema },
  get_wallet_policy: { params: getWalletPolicyParamsSchema, result: getWalletPolicyResultSchema },
  attest_wallet_policy: { params: attestWalletPolicyParamsSchema, result: attestWalletPolicyResultSchema },
} as const;

export type SignerParams<M extends SignerMethod> = z.infer<(typeof SIGNER_METHODS)[M]['params']>;
export type SignerResult<M extends SignerMethod> = z.infer<(typeof SIGNER_METHODS)[M]['result']>;
