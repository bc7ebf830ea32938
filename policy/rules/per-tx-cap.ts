/** per_tx_cap_usd: a single payment above the cap is refused. */
import { formatUsd, parseUsd } from '../money.js';
import type { WalletPolicy } from '../policy-schema.js';
import type { SpendRequest, Violation } from '../policy-types.js';

export function checkPerTxCap(policy: WalletPolicy, request: SpendRequest): Violation | null {
  if (policy.per_tx_cap_usd === undefined) return null;
  const cap = parseUsd(policy.per_tx_cap_usd);
  if (request.amountMicro <= cap) return null;
  return { rule: 'per_tx_cap_usd', message: `payment of ${formatUsd(request.amountMicro)} USD exceeds the per-transaction cap of ${formatUsd(cap)} USD`, limit: formatUsd(cap), attempted: formatUsd(request.amountMicro) };
}
