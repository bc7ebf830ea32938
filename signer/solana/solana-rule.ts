/**
 * The stable names of every refusal of a Solana message (./check-x402-exact-message.ts), and the one
 * function that throws them: a SignerFault `invariant_violation` whose `details.rule` is the name (the front
 * branches on it; the message is for humans). The list is documented in ../protocol/signer-protocol.ts.
 *
 * Defends: ad-hoc refusals (every refusal has a name from this list, checked by the compiler).
 * Does not defend: anything by itself; the checks live in the modules that call `solanaRule`.
 */
import type { SignerErrorDetails } from '../protocol/signer-protocol.js';
import { SignerFault } from '../signer-error.js';

export const SOLANA_RULES = [
  'message_undecodable',
  'message_not_canonical',
  'address_lookup_table',
  'duplicate_account',
  'account_index_range',
  'fee_payer_is_wallet',
  'wallet_not_signer',
  'unexpected_signer',
  'program_not_allowed',
  'compute_budget_instruction',
  'compute_unit_limit',
  'compute_unit_price',
  'transfer_count',
  'transfer_instruction',
  'transfer_authority',
  'transfer_source',
  'transfer_destination',
  'allowed_mint',
  'transfer_decimals',
  'memo_instruction',
  'wallet_in_instruction',
] as const;
export type SolanaRule = (typeof SOLANA_RULES)[number];

/** Throws `invariant_violation` naming `rule` in the message and as a field when `condition` is false. */
export function solanaRule(
  condition: boolean,
  rule: SolanaRule,
  message: string,
  details: Omit<SignerErrorDetails, 'rule'> = {},
): asserts condition {
  if (!condition) throw new SignerFault('invariant_violation', `${rule}: ${message}`, { rule, ...details });
}
