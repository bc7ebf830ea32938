/**
 * per_tx_cap_usd: a single payment above the cap is refused; exactly at the cap is allowed.
 *
 * Protects against: one large payment (a mispriced or malicious 402 challenge) draining the wallet.
 * Known limits: says nothing about many small payments — that is the window caps' and velocity cap's job.
 */
import { formatUsd } from '../money.js';
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export function checkPerTxCap({ policy, request }: RuleContext): Violation | null {
  const cap = policy.perTxCapMicro;
  if (cap === undefined || request.amountMicro <= cap) return null;
  return {
    rule: 'per_tx_cap_usd',
    message: `payment of ${formatUsd(request.amountMicro)} USD exceeds the per-transaction cap of ${formatUsd(cap)} USD`,
    limit: formatUsd(cap),
    attempted: formatUsd(request.amountMicro),
  };
}
