/**
 * The ERC-20 Transfer events one token emitted in a transaction's logs, decoded, in log order: what the
 * ledger check (a seller's reported payment) and the upto settlement check both look for. Logs of other
 * contracts are passed over, and so are the token's other events (Approval, AuthorizationUsed). It judges
 * nothing: the callers decide which transfer counts.
 */
import { decodeEventLog, erc20Abi, type Hex } from 'viem';

export interface TokenTransfer<L> {
  from: string;
  to: string;
  value: bigint;
  /** The log the event was decoded from. */
  log: L;
}

export function tokenTransfers<L extends { address: string; topics: readonly Hex[]; data: Hex }>(
  logs: readonly L[],
  token: string,
): Array<TokenTransfer<L>> {
  const transfers: Array<TokenTransfer<L>> = [];
  for (const log of logs) {
    if (log.address.toLowerCase() !== token.toLowerCase()) continue;
    try {
      const event = decodeEventLog({
        abi: erc20Abi,
        eventName: 'Transfer',
        topics: log.topics as [Hex, ...Hex[]],
        data: log.data,
      });
      // viem picks the ABI event by the log's topic, and `eventName` does not narrow it: an Approval log of
      // the token (an EIP-2612 permit's, say) decodes as Approval. Only Transfer events count.
      if (event.eventName !== 'Transfer') continue;
      transfers.push({ from: event.args.from, to: event.args.to, value: event.args.value, log });
    } catch {
      // Another event of the token: not a transfer.
    }
  }
  return transfers;
}
