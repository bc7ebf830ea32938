/**
 * The pay wing's last floor: the signer's signature over a reservation's exact message — EIP-3009
 * TransferWithAuthorization for `exact`, the Permit2 witness transfer for `upto` — through the signer
 * gateway (../signing/signer-gateway.ts maps the signer's failures to AppErrors). No lock is held and
 * nothing is written here; the caller writes the signature before it leaves.
 */
import { PERMIT2_ADDRESS } from '@x402/evm';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { Reservation } from './pay-types.js';

export async function signReservation(signer: Pick<SignerGateway, 'call'>, reservation: Reservation): Promise<string> {
  const p = reservation.payment;
  const keys = { account_key_ref: reservation.accountKeyRef, wallet_key_ref: reservation.walletKeyRef };
  const signed =
    p.scheme === 'upto'
      ? await signer.call('sign_permit2_witness_transfer', {
          ...keys,
          address: p.permit2_authorization.from,
          domain: { name: 'Permit2', chainId: reservation.domain.chainId, verifyingContract: PERMIT2_ADDRESS },
          // The owner is the wallet itself: it is `address`, not a field of the signed struct.
          message: (({ from: _owner, ...permit }) => permit)(p.permit2_authorization),
        })
      : await signer.call('sign_transfer_authorization', {
          ...keys,
          address: p.authorization.from,
          domain: reservation.domain,
          message: p.authorization,
        });
  return signed.signature;
}
