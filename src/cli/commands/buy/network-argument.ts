/**
 * `--network <chain|CAIP-2>` of `xx buy` (and the MCP `pay` tool's `network`): a chain name Treasury knows
 * (`base`, `base-sepolia`, `solana`, `solana-devnet`) or a CAIP-2 id (`eip155:84532`,
 * `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`), as the CAIP-2 id the buyer SDK's `network` option takes.
 *
 * Defends against: a misspelt network silently paying on the default one (an unknown name is
 * `invalid_argument`, exit 2, naming the flag). Does not: check that anything is payable there (the SDK's
 * `NoCompatibleAcceptError` lists what the seller offered).
 */
import { ChainRegistry } from '../../../shared/chain-registry.js';
import { SOLANA_DEVNET, SOLANA_MAINNET } from '../account/self-custody-solana.js';
import { badArgument } from '../seller/seller-kit.js';

const SOLANA_NAMES: Record<string, string> = { solana: SOLANA_MAINNET, 'solana-devnet': SOLANA_DEVNET };
const CAIP2 = /^(?:eip155:[1-9][0-9]{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{32})$/;

/** The CAIP-2 id of `value`, or undefined when it names no network this buyer pays on. */
export function resolveNetwork(value: string): string | undefined {
  if (CAIP2.test(value)) return value;
  return SOLANA_NAMES[value] ?? ChainRegistry.fromConfig(undefined).resolve(value)?.network;
}

/** `--network`'s CAIP-2 id; `invalid_argument` naming `flag` when it names no network. */
export function networkArgument(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const network = resolveNetwork(value);
  if (!network)
    throw badArgument(flag, `expected base, base-sepolia, solana, solana-devnet or a CAIP-2 id, got "${value}"`);
  return network;
}
