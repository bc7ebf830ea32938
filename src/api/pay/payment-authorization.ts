/**
 * A payment authorization of either scheme — an EIP-3009 authorization (`exact`) or a Permit2 witness
 * transfer (`upto`) — from the moment it is decided: reserved with `signature` still empty (as the
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
  | (PaymentAuthorizationCommon & { scheme: 'upto'; permit2_authorization: Permit2Authorization });

/** Sender, on-chain nonce (0x + 64 hex, as stored) and signature window of either kind of payment. */
export function paymentTerms(p: PaymentAuthorization): {
  from: string;
  nonce: string;
  validAfter: string;
  validBefore: string;
  to: string;
  value: string;
} {
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
