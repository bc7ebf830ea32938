/**
 * counterparty_allowlist: refused when the recipient is not in the list. Compared case-insensitively;
 * the recipient is reported EIP-55 checksummed. An empty list allows no recipient (fail-closed: an explicit
 * empty allowlist is read literally, never as "no list").
 *
 * Protects against: payments to anyone the owner did not name (a swapped payTo in a 402 challenge).
 * Known limits: only the `to` address is checked — not the asset, network or the seller behind a proxy.
 */
import { getAddress } from 'viem';
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export function checkCounterpartyAllowlist({ policy, request }: RuleContext): Violation | null {
  const list = policy.counterpartyAllowlist;
  if (list === undefined) return null;
  const to = request.to.toLowerCase();
  if (list.has(to)) return null;
  const counterparty = getAddress(to);
  return {
    rule: 'counterparty_allowlist',
    message: `${counterparty} is not in the counterparty allowlist`,
    counterparty,
  };
}
