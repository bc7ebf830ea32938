/**
 * counterparty_allowlist: refused when the recipient is not in the list. EVM addresses compared
 * case-insensitively and reported EIP-55 checksummed; base58 (Solana) ones exactly
 * (../counterparty-address.ts). An empty list allows no recipient (fail-closed: an explicit empty allowlist
 * is read literally, never as "no list").
 *
 * Protects against: payments to anyone the owner did not name (a swapped payTo in a 402 challenge).
 * Known limits: only the `to` address is checked — not the asset, network or the seller behind a proxy.
 */
import { counterpartyKey, displayCounterparty } from '../counterparty-address.js';
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export function checkCounterpartyAllowlist({ policy, request }: RuleContext): Violation | null {
  const list = policy.counterpartyAllowlist;
  if (list === undefined) return null;
  const to = counterpartyKey(request.to);
  if (list.has(to)) return null;
  const counterparty = displayCounterparty(request.to);
  return {
    rule: 'counterparty_allowlist',
    message: `${counterparty} is not in the counterparty allowlist`,
    counterparty,
  };
}
