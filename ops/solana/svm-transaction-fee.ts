/**
 * The fee a validator charges a transaction: 5,000 lamports per signature plus the priority fee,
 * ceil(compute-unit price in micro-lamports × compute-unit limit / 10^6), read from the message's
 * Compute Budget instructions (SetComputeUnitLimit, SetComputeUnitPrice). What getTransaction answers as
 * `meta.fee` (litesvm's metadata carries none).
 * Defends against: nothing; it reads a message the chain already accepted.
 * Does not: model fee-rate governance or the default limit's per-instruction rule beyond 200,000 units
 * per non-compute-budget instruction (capped at 1,400,000), which is what the runtime applies.
 */
import { getCompiledTransactionMessageDecoder, type TransactionMessageBytes } from '@solana/kit';

export const LAMPORTS_PER_SIGNATURE = 5_000n;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_COMPUTE_UNITS = 1_400_000n;

export function transactionFee(messageBytes: TransactionMessageBytes): bigint {
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  let limit: bigint | undefined;
  let microLamports = 0n;
  let otherInstructions = 0n;
  for (const ix of message.instructions) {
    const data = ix.data ?? new Uint8Array();
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (message.staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM) otherInstructions += 1n;
    else if (data[0] === SET_COMPUTE_UNIT_LIMIT && data.length === 5) limit = BigInt(view.getUint32(1, true));
    else if (data[0] === SET_COMPUTE_UNIT_PRICE && data.length === 9) microLamports = view.getBigUint64(1, true);
  }
  const units = limit ?? otherInstructions * DEFAULT_UNITS_PER_INSTRUCTION;
  const cappedUnits = units > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : units;
  const priority = (microLamports * cappedUnits + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + priority;
}
