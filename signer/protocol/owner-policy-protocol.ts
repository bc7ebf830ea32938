/**
 * The signer protocol's messages about owner-signed policies (docs/adr/0012-owner-signed-policies.md): who a
 * wallet's policy authority is, and the signed policy documents (policy/signed-policy.ts) the signer keeps
 * and enforces itself. Re-exported by ./signer-protocol.ts, the door src/ imports.
 *
 * Defends: the front naming an authority it has no signature from — an owner authority comes with the
 * owner's own sign-in message and signature, which the signer verifies; a policy handed over without the
 * authority's signature or with a version that does not rise (refused with stable codes); a policy for a wallet
 * whose key the signer does not hold (`key_not_found`, rule `unknown_wallet`); refusals whose
 * reasons must be parsed out of text (a policy refusal carries the violated rules as fields); a sign-in message
 * holding text the API's stored-text rule refuses (a NUL, a lone surrogate, a bidirectional control: `invalid_request`).
 * And a front that withholds a newer document while saying it applied it (docs/security-model.md): a receipt
 * (`attest_wallet_policy`) states what the signer holds now, in a text the signer builds itself
 * (signer/owner-policy/policy-receipt-statement.ts), signed with the wallet's own key, around a nonce the owner chose;
 * the nonce is the only text of the request it carries, and only as 64 lower-case hex digits.
 * Does not defend: which owner signed in — the signer cannot know the deployment's accounts, only that the
 * named address signed a sign-in; see the ADR for what that leaves to the front.
 */
import { z } from 'zod';
import { RULE_NAMES } from '../../policy/policy-types.js';
import { walletPolicySchema } from '../../policy/policy-schema.js';
import { MAX_ISSUED_AT, policySignatureFieldsSchema } from '../../policy/signed-policy.js';
import { solanaAddressSchema } from './solana-protocol.js';
import { keyRefSchema, wireProse } from './wire-primitives.js';

const addressSchema = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 20-byte 0x address');
const signature65Schema = z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'expected a 65-byte 0x-prefixed hex signature');
const bytes32HexSchema = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x-prefixed 32-byte hex');

/**
 * A sign-in message as the owner signed it: at most 4,096 UTF-16 code units of storable prose (./wire-primitives.ts
 * `wireProse`), the rule the API held it to when it stored the sign-in; the signer keeps it as the authority's proof.
 */
const signInMessageSchema = wireProse(4096);

/** A SIWE (EIP-4361) sign-in as the owner signed it: the message text and its EIP-191 signature. */
export const signInProofSchema = z.object({ message: signInMessageSchema, signature: signature65Schema }).strict();

/**
 * A SIWS (Sign In With Solana) sign-in as the owner signed it: the message text and its Ed25519 signature over
 * the text's UTF-8 bytes (64 bytes, base58, as the sign-in attestation carries it). The key is the address the
 * message names.
 */
export const siwsProofSchema = z
  .object({
    scheme: z.literal('siws'),
    message: signInMessageSchema,
    signature: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'expected a base58 Ed25519 signature'),
  })
  .strict();

/**
 * An address of either family: a wallet whose policy the signer keeps (EVM or Solana), or a policy authority (an
 * EVM owner or approver, or a Solana owner's base58 Ed25519 key).
 */
const eitherAddressSchema = z.union([addressSchema, solanaAddressSchema]);

/**
 * Who the front asks to be an account's policy authority: the owner (their address and the sign-in that
 * proves they hold its key), or the deployment's policy approver (configured in the signer's own
 * environment; the front cannot name its address).
 */
export const authorityRequestSchema = z.union([
  z.object({ kind: z.literal('owner'), address: addressSchema, sign_in: signInProofSchema }).strict(),
  z.object({ kind: z.literal('owner'), address: solanaAddressSchema, sign_in: siwsProofSchema }).strict(),
  z.object({ kind: z.literal('approver') }).strict(),
]);

/**
 * A wallet's policy authority as the signer recorded it: `owner` (proven by a sign-in), `approver` (the
 * deployment's key), or `first_signer` (a wallet made before the signer kept authorities, bound to whoever
 * signed its first policy: docs/adr/0012-owner-signed-policies.md says what that trusts).
 */
export const policyAuthoritySchema = z
  .object({
    kind: z.enum(['owner', 'approver', 'first_signer']),
    /**
     * Null only for an approver the signer's configuration does not name (no policy can then be set). A
     * base58 address only for an owner who signed in with Solana (their policies are Ed25519-signed statements).
     */
    address: eitherAddressSchema.nullable(),
  })
  .strict();

/** A wallet key's references as the front keeps them (the signer made them: opaque, no key material). */
export const walletKeyRefsSchema = z.object({ account_key_ref: keyRefSchema, wallet_key_ref: keyRefSchema }).strict();

export const setWalletPolicyParamsSchema = z
  .object({
    /** The wallet's address, as the document names it (EIP-55 or base58). */
    address: eitherAddressSchema,
    policy: walletPolicySchema,
    /**
     * The wallet's key, for a wallet the signer has no record of (made before it kept them): the signer keeps policy
     * state only for wallets whose key it holds, and proves this one by having it sign a probe of its own
     * (signer/owner-policy/held-wallet-keys.ts). Not read when the signer knows the wallet already; not signed over.
     */
    wallet_key: walletKeyRefsSchema.optional(),
  })
  .merge(policySignatureFieldsSchema)
  .strict();
export const setWalletPolicyResultSchema = z
  .object({
    address: eitherAddressSchema,
    version: policySignatureFieldsSchema.shape.version,
    policy_hash: bytes32HexSchema,
    authority: policyAuthoritySchema,
  })
  .strict();

export const getWalletPolicyParamsSchema = z.object({ address: eitherAddressSchema }).strict();
export const getWalletPolicyResultSchema = z
  .object({
    address: eitherAddressSchema,
    /** Null: the signer holds no authority for the wallet (made before it kept them, or without a store). */
    authority: policyAuthoritySchema.nullable(),
    /** Null: no signed policy yet, so only the signer's own ceilings apply. */
    current: z
      .object({
        version: policySignatureFieldsSchema.shape.version,
        policy_hash: bytes32HexSchema,
        issued_at: z.number().int().min(0).max(MAX_ISSUED_AT),
      })
      .strict()
      .nullable(),
  })
  .strict();

/** A receipt's nonce: 32 bytes the owner chose at random, as 64 lower-case hex digits (one spelling only). */
export const receiptNonceSchema = z.string().regex(/^[0-9a-f]{64}$/, 'expected 32 bytes as 64 lower-case hex digits');
/** The longest receipt statement: eight short lines (an owner's base58 address the longest value). */
export const POLICY_RECEIPT_MAX_CHARS = 1024;

/**
 * A receipt of what the signer holds for a wallet (signer/owner-policy/policy-receipts.ts): for the wallet named
 * (whose key the signer must know it holds: `key_not_found`, rule `unknown_wallet`, otherwise), signed with that key.
 * `nonce`: 32 bytes the owner chose at random, so that a receipt cannot be one kept from before.
 */
export const attestWalletPolicyParamsSchema = z
  .object({ address: eitherAddressSchema, wallet_key: walletKeyRefsSchema, nonce: receiptNonceSchema })
  .strict();
/** The text the signer built (signer/owner-policy/policy-receipt-statement.ts), returned as signed. */
const receiptStatementSchema = z.string().min(1).max(POLICY_RECEIPT_MAX_CHARS);
export const attestWalletPolicyResultSchema = z.discriminatedUnion('scheme', [
  z
    .object({
      /** EIP-191 personal_sign of `statement`'s UTF-8 bytes by an EVM wallet's key (never a transaction or typed data). */
      scheme: z.literal('eip191'),
      statement: receiptStatementSchema,
      signature: signature65Schema,
    })
    .strict(),
  z
    .object({
      /**
       * Ed25519 by a Solana wallet's key of the Solana off-chain message holding `statement`, rebuilt from the
       * statement and the wallet's address alone (../solana/policy-receipt-message.ts; never a transaction).
       */
      scheme: z.literal('solana_offchain'),
      statement: receiptStatementSchema,
      /** The 64-byte signature in base58, as Solana spells it. */
      signature: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'expected a base58 Ed25519 signature'),
    })
    .strict(),
]);

/** One violated rule of a signed policy, as the signer reports it (the same names as the front's decisions). */
export const policyViolationDetailSchema = z
  .object({
    rule: z.enum(RULE_NAMES),
    limit: z.string().max(64).optional(),
    attempted: z.string().max(64).optional(),
  })
  .strict();

export type SignInProof = z.infer<typeof signInProofSchema>;
export type SiwsProof = z.infer<typeof siwsProofSchema>;
export type AuthorityRequest = z.infer<typeof authorityRequestSchema>;
export type PolicyAuthority = z.infer<typeof policyAuthoritySchema>;
export type WalletKeyRefs = z.infer<typeof walletKeyRefsSchema>;
export type SetWalletPolicyParams = z.infer<typeof setWalletPolicyParamsSchema>;
export type SetWalletPolicyResult = z.infer<typeof setWalletPolicyResultSchema>;
export type GetWalletPolicyResult = z.infer<typeof getWalletPolicyResultSchema>;
export type PolicyViolationDetail = z.infer<typeof policyViolationDetailSchema>;
export type AttestWalletPolicyParams = z.infer<typeof attestWalletPolicyParamsSchema>;
export type AttestWalletPolicyResult = z.infer<typeof attestWalletPolicyResultSchema>;
