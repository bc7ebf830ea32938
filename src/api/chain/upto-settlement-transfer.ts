/**
 * Whether a mined transaction IS the settlement of one particular x402 `upto` (Permit2 witness transfer)
 * authorization, and which of its logs that settlement's transfer is: ./verify-upto-settlement.ts accepts the
 * transaction for that authorization — a successful, direct call of the upto proxy's settle or
 * settleWithPermit carrying exactly the permit and the signature Treasury signed, that moved the settled
 * amount from the owner to the witness payee — and the answer is the log index of that token Transfer (the
 * first one from the owner to the payee of exactly the settled amount), or undefined.
 *
 * Defends: a seller tying a real transaction to another, unsettled `upto` authorization of the same buyer by
 * naming its Permit2 nonce (a plain transfer, an `exact` payment or another authorization's settlement, even
 * to the same payee for the same amount): Permit2 emits no event naming the nonce, so nothing short of the
 * transaction's own calldata carrying this very permit and signature counts.
 * Does not defend: a settlement made through a contract that calls the proxy (not the transaction's own call:
 * not linked, never guessed at); a settlement of zero (nothing moved: there is no transfer to link); a lying
 * RPC endpoint.
 */
import { AppError } from '../errors/app-error.js';
import { tokenTransfers } from './token-transfers.js';
import { verifyUptoSettlement, type SettlementTransaction, type SignedUptoPermit } from './verify-upto-settlement.js';

/** A mined transaction with its logs' indexes, as the ledger verifier reads it. */
export interface IndexedSettlementTransaction extends SettlementTransaction {
  logs: ReadonlyArray<SettlementTransaction['logs'][number] & { logIndex: number }>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The amount `tx` settled for `permit` through `proxy`, or undefined when it is not that settlement. */
function settledBy(tx: IndexedSettlementTransaction, permit: SignedUptoPermit, proxy: string): bigint | undefined {
  try {
    return verifyUptoSettlement(tx, permit, proxy);
  } catch (err) {
    if (err instanceof AppError && err.code === 'settlement_not_verified') return undefined;
    throw err;
  }
}

/** The log index of the Transfer that settled `permit` in `tx` (see the header), or undefined. */
export function uptoSettlementTransferLog(
  tx: IndexedSettlementTransaction,
  permit: SignedUptoPermit,
  proxy: string,
): number | undefined {
  const settled = settledBy(tx, permit, proxy);
  if (settled === undefined || settled === 0n) return undefined;
  const transfer = tokenTransfers(tx.logs, permit.token).find(
    (t) => same(t.from, permit.owner) && same(t.to, permit.witness.to) && t.value === settled,
  );
  return transfer?.log.logIndex;
}
