/**
 * What a payer signed for one accepts entry, in the x402 payload's terms: an EVM `exact` EIP-3009
 * authorization or `upto` Permit2 authorization with its signature, or a Solana `exact` transaction. The
 * same for both payers (buyer-payer.ts: Treasury's pay endpoint, or a key the caller holds); the buyer checks
 * the terms (x402-signed-payment.ts) and returns them (x402-result.ts).
 */
import type { Eip2612Permit } from '../shared/api-responses/pay-responses.js';
import type { Eip3009Authorization } from '../x402/wire-schemas.js';
import type { Permit2Authorization } from './treasury-client-schemas.js';

/** What an EVM payer signed for one entry, in the x402 payload's terms (the same for both payers). */
export type EvmSignedTerms = {
  signature: string;
  network: string;
  asset: string;
} & (
  | {
      scheme: 'exact';
      /** The EIP-3009 message, in the shape of the x402 wire's one schema (src/shared/eip3009-authorization.ts). */
      authorization: Eip3009Authorization;
    }
  | {
      scheme: 'upto';
      permit2_authorization: Permit2Authorization;
      /** The EIP-2612 permit to Permit2, when the seller advertised `eip2612GasSponsoring` and one was needed. */
      eip2612_permit?: Eip2612Permit;
    }
);

/** What a Solana payer signed: the x402 `exact` SVM transaction (base64 wire, the fee-payer slot empty). */
export interface SvmSignedTerms {
  scheme: 'exact';
  network: string;
  asset: string;
  transaction: string;
}

/** What was signed for one entry, in the x402 payload's terms. */
export type SignedTerms = EvmSignedTerms | SvmSignedTerms;

/** True for a Solana payer's terms. */
export const isSvmTerms = (terms: SignedTerms): terms is SvmSignedTerms => 'transaction' in terms;
