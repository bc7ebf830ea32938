/**
 * TREASURY_SIGNER_ALLOWED_TOKENS: the only tokens treasury-signer signs for, comma-separated — token contracts per
 * EVM chain id (`chainId:0xaddress`) and mints per Solana network (`solana:<genesis hash prefix>:<mint>`).
 *
 * Defends against: a signer whose front is compromised signing authorizations that move real money on a deployment
 * that never meant to (a sandbox, a testnet or a developer's signer). Unset, the list names testnet tokens only —
 * USDC on Base Sepolia (84532) and on Solana devnet; a mainnet token (USDC on Base, 8453; USDC on Solana mainnet) is
 * signed for only when the operator names it. Set, the list is the whole allow-list, EVM and Solana alike: a network
 * it does not name is refused. In production mode the variable must be set (./signer-production-mode.ts). A set but
 * empty list, or one malformed entry, refuses the start naming the variable (the entry is quoted: addresses are not
 * secrets).
 * Does not defend: a wrongly named token (the address is the operator's word), nor the amount (the signer's limits).
 */
import { z } from 'zod';
import { SignerConfigError } from './signer-config-error.js';
import { DEFAULT_SOLANA_INVARIANTS, type SolanaAllowedMint } from './solana-invariants.js';

/** USDC on Base Sepolia: the EVM half of the list a signer without TREASURY_SIGNER_ALLOWED_TOKENS uses. */
const BASE_SEPOLIA_USDC = '84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e';

/** The list used when TREASURY_SIGNER_ALLOWED_TOKENS is unset: testnet tokens only, no mainnet asset. */
export const TESTNET_ALLOWED_TOKENS = [
  BASE_SEPOLIA_USDC,
  ...DEFAULT_SOLANA_INVARIANTS.allowedMints.map((m) => `${m.network}:${m.mint}`),
].join(',');

const evmEntrySchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}:0x[0-9a-fA-F]{40}$/)
  .transform((v) => {
    const [chainId, address] = v.split(':') as [string, string];
    return { chainId: Number(chainId), address: address.toLowerCase() };
  });

/** `solana:` + a CAIP-2 reference (32 base58 characters) + `:` + a base58 mint address (32 to 44 characters). */
const solanaEntrySchema = z
  .string()
  .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}:[1-9A-HJ-NP-Za-km-z]{32,44}$/)
  .transform((v): SolanaAllowedMint => {
    const [, reference, mint] = v.split(':') as [string, string, string];
    return { network: `solana:${reference}`, mint };
  });

/** An EVM token contract the signer signs for (address lower-case). */
export type AllowedToken = z.output<typeof evmEntrySchema>;

export interface AllowedTokens {
  evm: readonly AllowedToken[];
  solana: readonly SolanaAllowedMint[];
  /** True when TREASURY_SIGNER_ALLOWED_TOKENS was set; false: the testnet default applies. */
  explicit: boolean;
}

/** One entry, EVM or Solana; a malformed one refuses the start, quoting it (up to 80 characters). */
function parseEntry(entry: string): { evm: AllowedToken } | { solana: SolanaAllowedMint } {
  const evm = evmEntrySchema.safeParse(entry);
  if (evm.success) return { evm: Object.freeze(evm.data) };
  const solana = solanaEntrySchema.safeParse(entry);
  if (solana.success) return { solana: Object.freeze(solana.data) };
  throw new SignerConfigError(
    `TREASURY_SIGNER_ALLOWED_TOKENS entry "${entry.slice(0, 80)}": expected chainId:0xaddress or solana:<network>:<mint>`,
  );
}

/** The allow-list from the variable's value (`undefined`: unset, the testnet default), split by chain family. */
export function parseAllowedTokens(raw: string | undefined): AllowedTokens {
  const entries = (raw ?? TESTNET_ALLOWED_TOKENS)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseEntry);
  if (entries.length === 0)
    throw new SignerConfigError(
      'TREASURY_SIGNER_ALLOWED_TOKENS: is empty; name the tokens the signer signs for (chainId:0xaddress or solana:<network>:<mint>, comma-separated)',
    );
  return Object.freeze({
    evm: Object.freeze(entries.flatMap((e) => ('evm' in e ? [e.evm] : []))),
    solana: Object.freeze(entries.flatMap((e) => ('solana' in e ? [e.solana] : []))),
    explicit: raw !== undefined,
  });
}
