/**
 * Whether an on-chain transaction settled a given x402 `upto` authorization, and for how much: the
 * transaction succeeded, it called the x402 upto proxy's `settle` (or `settleWithPermit`) directly, the
 * Permit2 witness transfer it carried is the one Treasury signed — owner, token, signed maximum, nonce,
 * deadline, witness (payee, facilitator, validAfter) and the signature itself — and the token moved exactly
 * the settled amount from the owner to the payee.
 *
 * Defends: giving back spend on a buyer's word. A transaction of another authorization, of another wallet,
 * to another contract, a reverted one, or one whose calldata names a different amount than what moved is
 * refused (`settlement_not_verified` with the reason); Permit2 spends each nonce once, so a transaction that
 * carries this authorization's nonce and signature and succeeded is its one settlement.
 * Does not defend: a settlement made through a contract that calls the proxy (the call is then not the
 * transaction's own, and is refused, not guessed at); a chain reorganisation after the receipt was read
 * (callers read receipts the RPC reports as mined; depth is the RPC's choice); a lying RPC endpoint.
 */
import { decodeFunctionData, type Hex } from 'viem';
import { tokenTransfers } from './token-transfers.js';
import { x402UptoPermit2ProxyABI } from '@x402/evm';
import { AppError } from '../errors/app-error.js';
import type { Permit2Authorization } from '../../shared/api-responses/pay-responses.js';

/** The Permit2 witness transfer Treasury signed, as stored with the authorization (decimal strings). */
export interface SignedUptoPermit {
  owner: string;
  token: string;
  maxRaw: bigint;
  nonce: bigint;
  deadline: bigint;
  witness: { to: string; facilitator: string; validAfter: bigint };
  signature: string;
}

/** The check's view of a stored Permit2 witness transfer (the pay reply's shape) and the signature Treasury made over it. */
export function signedUptoPermit(permit: Permit2Authorization, signature: string): SignedUptoPermit {
  return {
    owner: permit.from,
    token: permit.permitted.token,
    maxRaw: BigInt(permit.permitted.amount),
    nonce: BigInt(permit.nonce),
    deadline: BigInt(permit.deadline),
    witness: {
      to: permit.witness.to,
      facilitator: permit.witness.facilitator,
      validAfter: BigInt(permit.witness.validAfter),
    },
    signature,
  };
}

/** The parts of a transaction and its receipt the check reads. */
export interface SettlementTransaction {
  to: string | null;
  input: Hex;
  status: 'success' | 'reverted';
  logs: ReadonlyArray<{ address: string; topics: readonly Hex[]; data: Hex }>;
}

export type SettlementMismatch =
  'reverted' | 'not_an_upto_settlement' | 'authorization_mismatch' | 'amount_over_maximum' | 'transfer_missing';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function refuse(reason: SettlementMismatch, message: string): never {
  throw new AppError('settlement_not_verified', { message, fields: { reason } });
}

/** The amount (token raw units) `tx` settled for `permit`, sent through `proxy`; throws settlement_not_verified otherwise. */
export function verifyUptoSettlement(tx: SettlementTransaction, permit: SignedUptoPermit, proxy: string): bigint {
  if (tx.status !== 'success') refuse('reverted', 'The transaction reverted: it settled nothing.');
  if (!tx.to || !same(tx.to, proxy))
    refuse('not_an_upto_settlement', 'The transaction is not a call to the x402 upto proxy.');
  let call: ReturnType<typeof decodeFunctionData<typeof x402UptoPermit2ProxyABI>>;
  try {
    call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: tx.input });
  } catch {
    refuse('not_an_upto_settlement', 'The transaction does not call settle on the x402 upto proxy.');
  }
  if (call.functionName !== 'settle' && call.functionName !== 'settleWithPermit')
    refuse('not_an_upto_settlement', 'The transaction does not call settle on the x402 upto proxy.');
  const [signed, amount, owner, witness, signature] = (
    call.functionName === 'settle' ? call.args : call.args.slice(1)
  ) as [
    { permitted: { token: string; amount: bigint }; nonce: bigint; deadline: bigint },
    bigint,
    string,
    { to: string; facilitator: string; validAfter: bigint },
    Hex,
  ];
  const matches =
    same(owner, permit.owner) &&
    same(signed.permitted.token, permit.token) &&
    signed.permitted.amount === permit.maxRaw &&
    signed.nonce === permit.nonce &&
    signed.deadline === permit.deadline &&
    same(witness.to, permit.witness.to) &&
    same(witness.facilitator, permit.witness.facilitator) &&
    witness.validAfter === permit.witness.validAfter &&
    same(signature, permit.signature);
  if (!matches) refuse('authorization_mismatch', 'The transaction settles another authorization.');
  if (amount > permit.maxRaw) refuse('amount_over_maximum', 'The transaction names more than the signed maximum.');
  if (amount === 0n) return 0n;
  const moved = tokenTransfers(tx.logs, permit.token).some(
    (t) => same(t.from, permit.owner) && same(t.to, permit.witness.to) && t.value === amount,
  );
  if (!moved)
    refuse('transfer_missing', 'The transaction did not move the settled amount from the wallet to the payee.');
  return amount;
}
