/**
 * Whether a mined transaction carried one particular EIP-3009 authorization: the token emitted
 * `AuthorizationUsed(authorizer, nonce)` for it, and the log right after it (USDC's transferWithAuthorization
 * marks the nonce used, then transfers) is the token's `Transfer` of exactly that authorization — from the
 * authorizer, to its payee, of its value. Answers that Transfer's log index, or undefined.
 *
 * Defends: a seller tying a real transaction to another authorization of the same buyer by naming its nonce
 * (a $0.01 transfer shown as the settlement of an unsettled $0.50 authorization): the nonce must have been
 * spent in this very transaction, moving exactly what that authorization said.
 * Does not defend: a lying RPC endpoint; tokens whose transferWithAuthorization emits its logs in another
 * order (none that Treasury pays with); Permit2 (`upto`) nonces, which emit no AuthorizationUsed: a ledger row
 * is linked to an `upto` authorization by ./upto-settlement-transfer.ts instead, only when the transaction is
 * that authorization's own settlement (./verify-upto-settlement.ts).
 */
import { decodeEventLog, parseAbi, type Hex } from 'viem';
import { tokenTransfers } from './token-transfers.js';

const AUTHORIZATION_USED_ABI = parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']);

export interface SignedAuthorization {
  from: string;
  to: string;
  value: bigint;
  /** bytes32, 0x + 64 hex. */
  nonce: string;
}

type Log = { address: string; topics: readonly Hex[]; data: Hex; logIndex: number };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function usedNonce(log: Log): { authorizer: string; nonce: string } | undefined {
  try {
    const event = decodeEventLog({
      abi: AUTHORIZATION_USED_ABI,
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    return { authorizer: event.args.authorizer, nonce: event.args.nonce };
  } catch {
    return undefined;
  }
}

/** The log index of the Transfer `authorization` made in `logs` (see the header), or undefined. */
export function authorizationTransferLog(
  logs: readonly Log[],
  asset: string,
  authorization: SignedAuthorization,
): number | undefined {
  const ofToken = logs.filter((l) => same(l.address, asset)).sort((a, b) => a.logIndex - b.logIndex);
  const transfers = new Map(tokenTransfers(ofToken, asset).map((t) => [t.log.logIndex, t]));
  for (let i = 0; i < ofToken.length - 1; i++) {
    const used = usedNonce(ofToken[i]!);
    if (!used || !same(used.authorizer, authorization.from) || !same(used.nonce, authorization.nonce)) continue;
    const next = ofToken[i + 1]!;
    const transfer = transfers.get(next.logIndex);
    if (
      transfer &&
      same(transfer.from, authorization.from) &&
      same(transfer.to, authorization.to) &&
      transfer.value === authorization.value
    )
      return next.logIndex;
  }
  return undefined;
}
