/**
 * capability_cap_usd: a map of capability → USD cap. A capability matches a key exactly, or a key ending in
 * `*` by prefix; an exact key wins, else the longest prefix. Fail-closed: on a wallet with any capability
 * cap, a transfer (which carries no capability) is refused with `transfer_not_permitted_with_capability_cap`,
 * and so is a pay that names no capability.
 */
import { formatUsd, parseUsd } from '../money.js';
import type { WalletPolicy } from '../policy-schema.js';
import type { SpendRequest, Violation } from '../policy-types.js';

export function matchCapabilityCap(caps: Record<string, string>, capability: string): { key: string; cap: string } | undefined {
  const exact = caps[capability];
  if (exact !== undefined && !capability.endsWith('*')) return { key: capability, cap: exact };
  let best: { key: string; cap: string } | undefined;
  for (const [key, cap] of Object.entries(caps)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (capability.startsWith(prefix) && (!best || prefix.length > best.key.length - 1)) best = { key, cap };
  }
  return best;
}

export function checkCapabilityCap(policy: WalletPolicy, request: SpendRequest): Violation | null {
  const caps = policy.capability_cap_usd;
  if (!caps || Object.keys(caps).length === 0) return null;
  if (request.kind === 'transfer') {
    return {
      rule: 'transfer_not_permitted_with_capability_cap',
      message: 'this wallet has capability caps, so transfers (which carry no capability) are refused; use per_tx_cap_usd and window caps for transfer limits',
    };
  }
  if (!request.capability) {
    return { rule: 'capability_cap_usd', message: 'this wallet has capability caps: a payment must name its capability' };
  }
  const match = matchCapabilityCap(caps, request.capability);
  if (!match) return null;
  const cap = parseUsd(match.cap);
  if (request.amountMicro <= cap) return null;
  return {
    rule: 'capability_cap_usd',
    message: `payment of ${formatUsd(request.amountMicro)} USD for capability ${request.capability} exceeds its cap of ${formatUsd(cap)} USD (${match.key})`,
    limit: formatUsd(cap),
    attempted: formatUsd(request.amountMicro),
    capability: request.capability,
    matched: match.key,
  };
}
