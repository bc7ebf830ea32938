/**
 * The programs an x402 `exact` payment on Solana may call, and the instruction data the signer accepts from
 * each, decoded with @solana/kit's codecs (no hand-written byte parsing): Compute Budget SetComputeUnitLimit
 * (2, u32) and SetComputeUnitPrice (3, u64), SPL Token / Token-2022 TransferChecked (12, u64 amount, u8
 * decimals), and Memo (v2: UTF-8 bytes).
 *
 * Defends: data read past what was expected — a decoder must consume the instruction's data exactly, so a
 * TransferChecked with trailing bytes, or a compute-budget instruction of another kind, is not mistaken for
 * the one the signer checked. Decoders return undefined for anything else; they never throw.
 * Does not defend: what the values mean (./check-x402-exact-message.ts decides).
 */
import { address, getStructDecoder, getU32Decoder, getU64Decoder, getU8Decoder, type Decoder } from '@solana/kit';

export const COMPUTE_BUDGET_PROGRAM = address('ComputeBudget111111111111111111111111111111');
export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
export const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');

const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const TRANSFER_CHECKED = 12;

const computeUnitLimitDecoder = getStructDecoder([
  ['discriminator', getU8Decoder()],
  ['units', getU32Decoder()],
]);
const computeUnitPriceDecoder = getStructDecoder([
  ['discriminator', getU8Decoder()],
  ['microLamports', getU64Decoder()],
]);
const transferCheckedDecoder = getStructDecoder([
  ['discriminator', getU8Decoder()],
  ['amount', getU64Decoder()],
  ['decimals', getU8Decoder()],
]);

/** The value a decoder reads from exactly all of `data`, or undefined (too short, too long, malformed). */
function readExactly<T>(decoder: Decoder<T>, data: Uint8Array): T | undefined {
  try {
    const [value, offset] = decoder.read(data, 0);
    return offset === data.length ? value : undefined;
  } catch {
    return undefined;
  }
}

export type ComputeBudgetSetting =
  { kind: 'unit_limit'; units: number } | { kind: 'unit_price'; microLamports: bigint };

/** A SetComputeUnitLimit or SetComputeUnitPrice; undefined for any other compute-budget data. */
export function decodeComputeBudgetData(data: Uint8Array): ComputeBudgetSetting | undefined {
  if (data[0] === SET_COMPUTE_UNIT_LIMIT) {
    const limit = readExactly(computeUnitLimitDecoder, data);
    return limit && { kind: 'unit_limit', units: limit.units };
  }
  if (data[0] === SET_COMPUTE_UNIT_PRICE) {
    const price = readExactly(computeUnitPriceDecoder, data);
    return price && { kind: 'unit_price', microLamports: price.microLamports };
  }
  return undefined;
}

/** A token program's TransferChecked data; undefined for any other token instruction. */
export function decodeTransferCheckedData(data: Uint8Array): { amount: bigint; decimals: number } | undefined {
  if (data[0] !== TRANSFER_CHECKED) return undefined;
  const transfer = readExactly(transferCheckedDecoder, data);
  return transfer && { amount: transfer.amount, decimals: transfer.decimals };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A memo's text; undefined when the bytes are not UTF-8 (the Memo program refuses them too). */
export function decodeMemoData(data: Uint8Array): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}
