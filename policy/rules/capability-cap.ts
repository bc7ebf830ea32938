/**
 * capability_cap_usd: a map of capability → USD cap. A pay's capability matches a key exactly, or a key
 * ending in `*` by prefix (`llm.*` matches `llm.gpt`, not `llm`; a lone `*` matches every capability). An
 * exact key wins over any prefix key; among prefix keys the longest prefix wins. A matched pay above the cap
 * is refused (exactly at the cap is allowed); a capability that matches no key is not capped
 * (docs/adr/0003-policy-engine.md — add a `*` key to cap everything else).
 *
 * Fail-closed, on a wallet whose policy holds at least one capability cap:
 * - a transfer (which carries no capability) is refused with `transfer_not_permitted_with_capability_cap`
 *   (docs/api.md, Policy); dollar limits on transfers are per_tx_cap_usd and the window caps;
 * - a pay that names no capability is refused with `capability_cap_usd` ("capability required") when the policy
 *   sets `capability_required: true`; without it, such a pay passes this rule (the caps bound the payments that
 *   name a capability; per_tx_cap_usd and the window caps bound the rest);
 * - a pay whose capability is malformed (outside the key grammar, e.g. upper case, which would otherwise slip
 *   past a lower-case key) is refused with `capability_cap_usd`.
 *
 * Protects against: an agent overspending on one kind of purchase; with `capability_required`, sidestepping
 * the caps by omitting the label (without it, an unlabelled pay is bounded only by the other rules).
 * Known limits: the capability is declared by the caller; a caller that lies about it can only be bounded by
 * a `*` key and the other rules.
 */
import { formatUsd } from '../money.js';
import { isCapabilityName } from '../policy-schema.js';
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export interface CapabilityCapMatch {
  /** The key that matched: the capability itself, or a `prefix*` / `*` key. */
  key: string;
  capMicro: bigint;
}

/** The cap that applies to `capability`: exact key first, else the longest matching `prefix*` key. */
export function matchCapabilityCap(
  caps: ReadonlyMap<string, bigint>,
  capability: string,
): CapabilityCapMatch | undefined {
  if (!capability.endsWith('*')) {
    const exact = caps.get(capability);
    if (exact !== undefined) return { key: capability, capMicro: exact };
  }
  let best: CapabilityCapMatch | undefined;
  let bestLength = -1;
  for (const [key, capMicro] of caps) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (prefix.length > bestLength && capability.startsWith(prefix)) {
      best = { key, capMicro };
      bestLength = prefix.length;
    }
  }
  return best;
}

export function checkCapabilityCap({ policy, request }: RuleContext): Violation | null {
  const caps = policy.capabilityCaps;
  if (!caps || caps.size === 0) return null;
  if (request.kind === 'transfer') {
    return {
      rule: 'transfer_not_permitted_with_capability_cap',
      message:
        'this wallet has capability caps, so transfers (which carry no capability) are refused; use per_tx_cap_usd and window caps for transfer limits',
    };
  }
  const capability = request.capability;
  // An empty string is not "none named": without `capability_required` it is refused below as malformed.
  if (capability === undefined && policy.capabilityRequired !== true) return null;
  if (capability === undefined || (capability === '' && policy.capabilityRequired === true)) {
    return {
      rule: 'capability_cap_usd',
      message: 'this wallet has capability caps and capability_required: a payment must name its capability',
      reason: 'capability_required',
    };
  }
  if (!isCapabilityName(capability)) {
    return {
      rule: 'capability_cap_usd',
      message: 'the capability is malformed (lower-case letters, digits and . _ : - /, at most 128 characters)',
      reason: 'capability_malformed',
    };
  }
  const match = matchCapabilityCap(caps, capability);
  if (!match || request.amountMicro <= match.capMicro) return null;
  return {
    rule: 'capability_cap_usd',
    message: `payment of ${formatUsd(request.amountMicro)} USD for capability ${capability} exceeds its cap of ${formatUsd(match.capMicro)} USD (${match.key})`,
    limit: formatUsd(match.capMicro),
    attempted: formatUsd(request.amountMicro),
    capability,
    matched: match.key,
  };
}
