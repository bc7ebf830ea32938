/**
 * What a `sign_solana_transaction` request pays, decided before anything is signed or counted: the wallet's and
 * the payee's base58 keys well formed, the message exactly an x402 `exact` payment by the wallet
 * (./check-x402-exact-message.ts), and a payee named whenever the signer keeps owner-signed policies.
 *
 * Defends: a Solana payment signed without its payee while a policy store holds counterparty rules for the
 * wallet (without `pay_to` the destination is a token account of nobody named: no such rule could be checked).
 * Does not: count the payment against a ceiling or a policy (the signer service does, after this).
 */
import type { SignSolanaTransactionParams } from '../protocol/signer-protocol.js';
import { SignerFault } from '../signer-error.js';
import { checkX402ExactMessage, type ExactTransfer } from './check-x402-exact-message.js';
import { solanaPublicKey } from './ed25519-signature.js';
import type { SolanaInvariants } from '../config/solana-invariants.js';

export interface SolanaPaymentRequest {
  publicKey: Uint8Array;
  message: Uint8Array;
  transfer: ExactTransfer;
}

export async function checkSolanaPaymentRequest(
  params: SignSolanaTransactionParams,
  invariants: SolanaInvariants,
  keepsOwnerPolicies: boolean,
): Promise<SolanaPaymentRequest> {
  const publicKey = solanaPublicKey(params.address, 'address');
  if (params.pay_to !== undefined) solanaPublicKey(params.pay_to, 'pay_to');
  const message = new Uint8Array(Buffer.from(params.message, 'base64'));
  const transfer = await checkX402ExactMessage(
    message,
    { wallet: params.address, network: params.network, payTo: params.pay_to },
    invariants,
  );
  if (params.pay_to === undefined && keepsOwnerPolicies)
    throw new SignerFault('invariant_violation', "pay_to is required: the payee's policy rules need its owner", {
      rule: 'pay_to_required',
    });
  return { publicKey, message, transfer };
}
