/**
 * The pay wing's last floor: the signer's signature over a reservation's exact message — EIP-3009
 * TransferWithAuthorization for `exact`, the Permit2 witness transfer for `upto`, the transaction message of a
 * Solana `exact` transfer (`sign_solana_transaction`, then the wire transaction assembled:
 * ./solana/assemble-transaction.ts) — through the signer gateway (../signing/signer-gateway.ts maps the
 * signer's failures to AppErrors). No lock is held and nothing is written here; the caller writes the signed
 * payment before it leaves.
 */
import { PERMIT2_ADDRESS } from '@x402/evm';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { Reservation } from './pay-types.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import { assembleTransaction } from './solana/assemble-transaction.js';

/** The signature, and the payment as it is recorded and answered (with it, and on Solana its transaction). */
export async function signReservation(
  signer: Pick<SignerGateway, 'call'>,
  reservation: Reservation,
): Promise<{ signature: string; payment: PaymentAuthorization }> {
  const p = reservation.payment;
  const keys = { account_key_ref: reservation.accountKeyRef, wallet_key_ref: reservation.walletKeyRef };
  if ('solana_transfer' in p) {
    const t = p.solana_transfer;
    const { signature } = await signer.call('sign_solana_transaction', {
      ...keys,
      address: t.from,
      network: p.network,
      message: t.message,
      pay_to: t.to,
    });
    return { signature, payment: { ...p, signature, transaction: assembleTransaction(t.message, t.from, signature) } };
  }
  const domain = reservation.domain;
  if (!domain) throw new Error('an EVM reservation carries its EIP-712 domain');
  const signed =
    p.scheme === 'upto'
      ? await signer.call('sign_permit2_witness_transfer', {
          ...keys,
          address: p.permit2_authorization.from,
          domain: { name: 'Permit2', chainId: domain.chainId, verifyingContract: PERMIT2_ADDRESS },
          // The owner is the wallet itself: it is `address`, not a field of the signed struct.
          message: (({ from: _owner, ...permit }) => permit)(p.permit2_authorization),
        })
      : await signer.call('sign_transfer_authorization', {
          ...keys,
          address: p.authorization.from,
          domain,
          message: p.authorization,
        });
  return { signature: signed.signature, payment: { ...p, signature: signed.signature } };
}
