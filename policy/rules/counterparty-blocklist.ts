/**
 * counterparty_blocklist: refused when the recipient is in the list. EVM addresses compared
 * case-insensitively and reported EIP-55 checksummed; base58 (Solana) ones exactly
 * (../counterparty-address.ts). An address in both lists is refused (the blocklist wins; the schema refuses
 * such a policy anyway).
 *
 * Protects against: payments to addresses the owner has flagged.
 * Known limits: a blocklist is trivially evaded by a fresh address; prefer an allowlist where possible.
 */
import { counterpartyKey, displayCounterparty } from '../counterparty-address.js';
import type { Violation } from '../policy-types.js';
import type { RuleContext } from './rule-context.js';

export function checkCounterpartyBlocklist({ policy, request }: RuleContext): Violation | null {
  const list = policy.counterpartyBlocklist;
  if (list === undefined) return null;
  const to = counterpartyKey(request.to);
  if (!list.has(to)) return null;
  const counterparty = displayCounterparty(request.to);
  return { rule: 'counterparty_blocklist', message: `${counterparty} is in the counterparty blocklist`, counterparty };
}
