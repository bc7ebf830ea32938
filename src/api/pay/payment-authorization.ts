/**
 * A payment authorization of any kind — an EIP-3009 authorization (`exact`), a Permit2 witness transfer
 * (`upto`), or a Solana `exact` transfer (its transaction message, signed by the wallet) — from the moment it
 * is decided: reserved with `signature` still empty (as the
 * authorizations row holds it until the signer signed it), then signed, which is what the pay endpoint
 * answers. And `paymentTerms`, the sender, on-chain nonce and window of either, as the authorizations table
 * stores them.
 */
import { numberToHex } from 'viem';
import type { PolicyDecision } from '../../../policy/policy-types.js';

/** The EIP-3009 TransferWithAuthorization of an `exact` payment. */
export interface Eip3009Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** The Permit2 witness transfer of an `upto` payment, as the x402 `permit2Authorization` payload carries it. */
export interface Permit2Authorization {
  from: string;
  permitted: { token: string; amount: string };
  spender: string;
  /** uint256, decimal. */
  nonce: string;
  deadline: string;
  witness: { to: string; facilitator: string; validAfter: string };
}

/**
 * The Solana `exact` transfer: the transaction message the wallet signs (v0, built as the official x402 client
 * builds it: ./solana/build-exact-message.ts), what it moves, and its window. `message_hash` (SHA-256 of the
 * message bytes, 0x + 64 hex: the facilitator's settlement key) is the authorization's unique nonce.
 */
export interface SolanaTransfer {
  from: string;
  to: string;
  amount: string;
  fee_payer: string;
  /** The message bytes, base64. */
  message: string;
  message_hash: string;
  valid_after: string;
  valid_before: string;
}

export interface PaymentAuthorizationCommon {
  /** Empty until the signer signed the authorization; the pay endpoint answers only signed ones. */
  signature: string;
  authorization_id: string;
  decision_id: string;
  wallet_id: string;
  network: string;
  asset: string;
  amount_usd: string;
  headroom: PolicyDecision['headroom'];
}

/** `scheme` is absent on `exact` payments recorded before `upto` existed. */
export type PaymentAuthorization =
  | (PaymentAuthorizationCommon & { scheme?: 'exact'; authorization: Eip3009Authorization })
  | (PaymentAuthorizationCommon & { scheme: 'upto'; permit2_authorization: Permit2Authorization })
  | SolanaPaymentAuthorization;

/**
 * A Solana `exact` payment: `signature` is the wallet's base58 Ed25519 signature and `transaction` the base64
 * wire transaction (fee-payer slot empty) the x402 payload carries; both empty until signed.
 */
export type SolanaPaymentAuthorization = PaymentAuthorizationCommon & {
  scheme: 'exact';
  solana_transfer: SolanaTransfer;
  transaction: string;
};

/** Sender, on-chain nonce (0x + 64 hex, as stored) and signature window of either kind of payment. */
export function paymentTerms(p: PaymentAuthorization): {
  from: string;
  nonce: string;
  validAfter: string;
  validBefore: string;
  to: string;
  value: string;
} {
  if ('solana_transfer' in p) {
    const t = p.solana_transfer;
    return {
      from: t.from,
      nonce: t.message_hash,
      validAfter: t.valid_after,
      validBefore: t.valid_before,
      to: t.to,
      value: t.amount,
    };
  }
  if (p.scheme === 'upto') {
    const a = p.permit2_authorization;
    return {
      from: a.from,
      nonce: numberToHex(BigInt(a.nonce), { size: 32 }),
      validAfter: a.witness.validAfter,
      validBefore: a.deadline,
      to: a.witness.to,
      value: a.permitted.amount,
    };
  }
  return p.authorization;
}
