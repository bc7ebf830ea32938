/**
 * The Solana part of the signer's wire contract, re-exported by ./signer-protocol.ts (which holds the
 * `sign_solana_transaction` params object itself): the bounded field schemas and the result.
 *
 * A Solana transaction message (legacy or v0) for the wallet to sign as the payer of an x402 `exact`
 * payment. The signer decodes it and signs only that shape (signer/solana/check-x402-exact-message.ts); a
 * refusal is an `invariant_violation` whose `details.rule` is one of:
 *   message_undecodable, message_not_canonical (not exactly one canonical encoding), address_lookup_table,
 *   duplicate_account, account_index_range, fee_payer_is_wallet, wallet_not_signer, unexpected_signer (not
 *   exactly the fee payer and the wallet), program_not_allowed (only Compute Budget, SPL Token, Token-2022
 *   and Memo), compute_budget_instruction, compute_unit_limit, compute_unit_price, transfer_count (not
 *   exactly one), transfer_instruction (not a four-account TransferChecked), transfer_authority,
 *   transfer_source (not the wallet's associated token account), transfer_destination (not pay_to's),
 *   allowed_mint (per network), transfer_decimals, memo_instruction, wallet_in_instruction (the wallet
 *   anywhere but as the transfer's authority), value_positive, value_max (the per-signature maximum),
 *   key_curve (the wallet key is the account's but not an Ed25519 key: a reference that is not the account's key is
 *   `key_not_found` first, signer/solana/ed25519-account-key.ts), and pay_to_required (no `pay_to` while the signer keeps
 *   a policy store: the payee's rules need the destination's owner).
 * The amount counts against the wallet's owner-signed policy (payee: `pay_to`) and its rolling ceilings (keyed by
 * the address) like an EVM signature's; a refusal by the policy is the same `policy_denied`.
 *
 * What it defends: every field is bounded before the signer acts — a base58 address of 32 to 44 characters
 * (the service checks it spells 32 bytes), a CAIP-2 Solana network, standard padded base64 of at most
 * MAX_SOLANA_MESSAGE_BYTES bytes. What it does not defend: what the message says (the signer's check), or
 * who may ask (./signer-protocol.ts).
 */
import { z } from 'zod';
import { isSolanaKey } from './solana-key.js';

export { isSolanaKey, keyBytes, keySpelling } from './solana-key.js';
export { solanaMessageDecoder, solanaMessageEncoder, type SolanaMessage } from './solana-message-codec.js';

/** A base58 Solana address: an Ed25519 public key (the signer checks it spells exactly 32 bytes). */
export const solanaAddressSchema = z
  .string()
  .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'expected a base58 Solana address')
  .refine(isSolanaKey, 'expected a base58 Solana address of 32 bytes');
/** CAIP-2 id of a Solana network: `solana:` and the first 32 characters of its genesis hash. */
export const solanaNetworkSchema = z
  .string()
  .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/, 'expected solana:<32-character genesis hash prefix>');
/** Largest Solana transaction message the signer decodes, in bytes (a whole transaction packet's size). */
export const MAX_SOLANA_MESSAGE_BYTES = 1232;
/** Standard padded base64 of 1 to MAX_SOLANA_MESSAGE_BYTES bytes (1,644 characters at most). */
export const solanaMessageSchema = z
  .string()
  .min(4)
  .max(1644)
  .refine(
    (v) =>
      /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v) &&
      (v.length / 4) * 3 - (v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0) <= MAX_SOLANA_MESSAGE_BYTES,
    `expected base64 of at most ${MAX_SOLANA_MESSAGE_BYTES} bytes`,
  );

export const signSolanaTransactionResultSchema = z
  .object({
    /** The 64-byte Ed25519 signature in base58 (Solana's spelling: the fee payer's is the transaction id). */
    signature: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'expected a base58 Ed25519 signature'),
    /** SHA-256 of the signed message bytes (the x402 facilitator's settlement key). */
    message_hash: z.string().regex(/^0x[0-9a-f]{64}$/, 'expected 0x-prefixed 32-byte lower-case hex'),
  })
  .strict();

export type SignSolanaTransactionResult = z.infer<typeof signSolanaTransactionResultSchema>;
