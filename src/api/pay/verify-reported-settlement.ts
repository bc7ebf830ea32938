/**
 * Which check a reported settlement is held to, by the kind of authorization Treasury signed: an `upto`
 * Permit2 witness transfer is verified as the upto proxy's settlement of exactly that permit and signature
 * (../chain/verify-upto-settlement.ts) and settles what it moved, at most the signed maximum; an `exact`
 * EIP-3009 authorization is verified by its token's use of exactly that nonce and its transfer of the signed
 * value to the signed payee (../chain/verify-exact-settlement.ts), and settles all of it.
 *
 * Defends: a settlement recorded on a check meant for another kind (each kind has its own, and only the one
 * the stored authorization names is run). Does not defend: Solana `exact` transfers — no check exists for
 * them here, so they are refused (`settlement_not_applicable`), never recorded unchecked.
 */
import { x402UptoPermit2ProxyAddress } from '@x402/evm';
import type { MinedTransaction } from '../chain/balance-reader.js';
import { verifyExactSettlement } from '../chain/verify-exact-settlement.js';
import { signedUptoPermit, verifyUptoSettlement } from '../chain/verify-upto-settlement.js';
import { AppError } from '../errors/app-error.js';
import type { PaymentAuthorization } from './payment-authorization.js';

/** The kinds of authorization whose settlement can be reported (EVM only). */
export type SettlementScheme = 'exact' | 'upto';

/** The scheme whose settlement check applies to `payment`; settlement_not_applicable for a Solana transfer. */
export function settlementScheme(payment: PaymentAuthorization): SettlementScheme {
  if (payment.scheme === 'upto') return 'upto';
  if ('authorization' in payment) return 'exact';
  throw notApplicable(payment.network);
}

function notApplicable(network: string): AppError {
  return new AppError('settlement_not_applicable', {
    message: 'The settlement of a Solana payment cannot be reported (yet): only EVM authorizations have one to record.',
    fields: { scheme: 'exact', network },
  });
}

/** The amount (token raw units) `tx` settled for the signed `payment`; settlement_not_verified when it did not. */
export function verifyReportedSettlement(
  payment: PaymentAuthorization,
  signature: string,
  tx: MinedTransaction,
): bigint {
  if (payment.scheme === 'upto')
    return verifyUptoSettlement(
      tx,
      signedUptoPermit(payment.permit2_authorization, signature),
      x402UptoPermit2ProxyAddress,
    );
  if (!('authorization' in payment)) throw notApplicable(payment.network);
  const a = payment.authorization;
  return verifyExactSettlement(tx, payment.asset, { from: a.from, to: a.to, value: BigInt(a.value), nonce: a.nonce });
}
