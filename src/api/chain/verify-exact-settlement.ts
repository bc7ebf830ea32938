/**
 * Whether an on-chain transaction settled a given x402 `exact` (EIP-3009 TransferWithAuthorization)
 * authorization: the transaction succeeded, and the authorization's token emitted `AuthorizationUsed(from,
 * nonce)` for exactly this authorization followed by its `Transfer` from the wallet to the signed payee of the
 * signed value (./authorization-transfer.ts). The answer is the amount settled: the signed value, all of it.
 *
 * Defends: a payment shown settled on a buyer's (or anyone's) word. A reverted transaction, one of another
 * token or chain, one that spent another authorization's nonce (even of the same wallet, to the same payee, for
 * the same amount), a plain transfer without the authorization, or one that moved another amount or to another
 * payee is refused (`settlement_not_verified` with the reason). The token spends a nonce once, so a
 * successful transaction carrying this nonce's AuthorizationUsed is this authorization's one settlement,
 * whoever sent it and through whatever contract (a facilitator's batch or multicall included).
 * Does not defend: a lying RPC endpoint; a reorganisation after the depth the caller requires; tokens whose
 * transferWithAuthorization logs in another order than USDC's (none that Treasury pays with).
 */
import { AppError } from '../errors/app-error.js';
import { authorizationTransferLog, type SignedAuthorization } from './authorization-transfer.js';
import type { MinedTransaction } from './balance-reader.js';

export type ExactSettlementMismatch = 'reverted' | 'authorization_mismatch';

function refuse(reason: ExactSettlementMismatch, message: string): never {
  throw new AppError('settlement_not_verified', { message, fields: { reason } });
}

/** The amount (token raw units) `tx` settled for `authorization` of `asset`; throws settlement_not_verified otherwise. */
export function verifyExactSettlement(
  tx: Pick<MinedTransaction, 'status' | 'logs'>,
  asset: string,
  authorization: SignedAuthorization,
): bigint {
  if (tx.status !== 'success') refuse('reverted', 'The transaction reverted: it settled nothing.');
  if (authorizationTransferLog(tx.logs, asset, authorization) === undefined)
    refuse(
      'authorization_mismatch',
      "The transaction does not carry this authorization: no use of its nonce followed by its transfer from the wallet to the payee of the signed amount, on the payment's token.",
    );
  return authorization.value;
}
