/**
 * Which check a reported settlement is held to, by the kind of authorization Treasury signed: an `upto`
 * Permit2 witness transfer is verified as the upto proxy's settlement of exactly that permit and signature
 * (../chain/verify-upto-settlement.ts) and settles what it moved, at most the signed maximum; an `exact`
 * EIP-3009 authorization is verified by its token's use of exactly that nonce and its transfer of the signed
 * value to the signed payee (../chain/verify-exact-settlement.ts), and settles all of it; a Solana `exact`
 * transfer is read from TREASURY_SOLANA_RPC_URL (../chain/solana-transaction-reader.ts, the seller ledger's
 * reader) and verified as the very message the wallet signed, moving the signed amount of the signed mint to
 * the payee's token account (../chain/verify-solana-settlement.ts), and settles all of it.
 * A report names its transaction in its family's spelling (`settlementKey`): an EVM hash (0x + 64 hex, stored
 * lower-case), a Solana signature (base58, 64 to 88 characters, case kept); the other spelling is 400.
 *
 * Defends: a settlement recorded on a check meant for another kind (each kind has its own, and only the one
 * the stored authorization names is run); one transaction stored under two spellings (EVM hashes are
 * lower-cased; base58 is case-sensitive and kept). Does not defend: a lying RPC endpoint.
 */
import { isSolanaSignature } from '../../shared/ledger-report-schema.js';
import { x402UptoPermit2ProxyAddress } from '@x402/evm';
import type { MinedTransaction } from '../chain/balance-reader.js';
import { readSolanaTransaction } from '../chain/solana-transaction-reader.js';
import { verifyExactSettlement } from '../chain/verify-exact-settlement.js';
import { keptTokenAccounts } from '../chain/kept-token-accounts.js';
import { verifySolanaSettlement } from '../chain/verify-solana-settlement.js';
import { signedUptoPermit, verifyUptoSettlement } from '../chain/verify-upto-settlement.js';
import { AppError } from '../errors/app-error.js';
import type { PaymentAuthorization, SolanaPaymentAuthorization } from './payment-authorization.js';

/** The kinds of authorization whose settlement can be reported. */
export type SettlementScheme = 'exact' | 'upto';

/** The scheme whose settlement check applies to `payment`. */
export function settlementScheme(payment: PaymentAuthorization): SettlementScheme {
  return payment.scheme === 'upto' ? 'upto' : 'exact';
}

/** Whether `payment` is a Solana transfer (its settlement is a Solana transaction). */
export function isSolanaPayment(payment: PaymentAuthorization): payment is SolanaPaymentAuthorization {
  return 'solana_transfer' in payment;
}

/** `transaction` as stored for `payment`'s family (see the header); invalid_request in the other spelling. */
export function settlementKey(payment: PaymentAuthorization, transaction: string): string {
  if (isSolanaPayment(payment)) {
    if (isSolanaSignature(transaction)) return transaction;
    throw new AppError('invalid_request', {
      message: "A Solana payment's settlement is named by its transaction signature (base58).",
      fields: { field: 'transaction', network: payment.network },
    });
  }
  if (/^0x[0-9a-fA-F]{64}$/.test(transaction)) return transaction.toLowerCase();
  throw new AppError('invalid_request', {
    message: "An EVM payment's settlement is named by its transaction hash (0x + 64 hex).",
    fields: { field: 'transaction', network: payment.network },
  });
}

/** The amount (raw units) the Solana transaction `signature` settled for `payment`, read from `rpc` (see the header). */
export async function verifyReportedSolanaSettlement(
  rpc: { url: string; timeoutMs: number } | undefined,
  payment: SolanaPaymentAuthorization,
  signature: string,
): Promise<bigint> {
  if (!rpc) throw new AppError('network_not_supported', { fields: { network: payment.network } });
  const read = await readSolanaTransaction(rpc.url, signature, rpc.timeoutMs);
  if (read.kind === 'unavailable')
    throw new AppError('chain_unavailable', { fields: { network: payment.network }, cause: new Error(read.cause) });
  if (read.kind === 'not_found')
    throw new AppError('settlement_not_verified', {
      message: "No transaction has that signature on the payment's network (yet).",
      fields: { reason: 'transaction_not_found' },
    });
  const t = payment.solana_transfer;
  return verifySolanaSettlement(signature, read.tx, {
    messageHash: t.message_hash,
    mint: payment.asset,
    from: t.from,
    destinations: await keptTokenAccounts(t.to, payment.asset),
    amountRaw: BigInt(t.amount),
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
  if (!('authorization' in payment))
    throw new AppError('settlement_not_applicable', { fields: { scheme: 'exact', network: payment.network } });
  const a = payment.authorization;
  return verifyExactSettlement(tx, payment.asset, { from: a.from, to: a.to, value: BigInt(a.value), nonce: a.nonce });
}
