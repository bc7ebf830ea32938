/** counterparty_allowlist / counterparty_blocklist: compared case-insensitively, reported checksummed. */
import { getAddress } from 'viem';
import type { WalletPolicy } from '../policy-schema.js';
import type { SpendRequest, Violation } from '../policy-types.js';

export function checkCounterpartyAllowlist(policy: WalletPolicy, request: SpendRequest): Violation | null {
  const list = policy.counterparty_allowlist;
  if (list === undefined) return null;
  const to = request.to.toLowerCase();
  if (list.some((a) => a.toLowerCase() === to)) return null;
  return { rule: 'counterparty_allowlist', message: `${getAddress(to)} is not in the counterparty allowlist`, counterparty: getAddress(to) };
}

export function checkCounterpartyBlocklist(policy: WalletPolicy, request: SpendRequest): Violation | null {
  const list = policy.counterparty_blocklist;
  if (list === undefined) return null;
  const to = request.to.toLowerCase();
  if (!list.some((a) => a.toLowerCase() === to)) return null;
  return { rule: 'counterparty_blocklist', message: `${getAddress(to)} is in the counterparty blocklist`, counterparty: getAddress(to) };
}
