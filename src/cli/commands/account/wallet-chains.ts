/**
 * How the account commands tell a managed wallet's chain: its family (`evm` for `eip155:*` networks, `svm` for
 * `solana:*`), the chain name a `--chain` argument sends to the server, and a network's short name for display.
 * Solana addresses are base58 and case-sensitive: nothing here (or in the commands using it) lower-cases,
 * checksums or otherwise rewrites an address.
 * Defends against: `--chain solana` in the sandbox asking for mainnet (the sandbox serves devnet's id only).
 * Does not: decide which chains a server serves (it answers `chain_not_supported` itself).
 */
import { ChainRegistry, networkFamily } from '../../../shared/chain-registry.js';
import { badArgument } from '../seller/seller-kit.js';

export type ChainFamily = 'evm' | 'svm';

/** The wallet's family, from its CAIP-2 network (the chain registry's rule: `solana:…` → svm, else evm). */
export function walletFamily(wallet: { network: string }): ChainFamily {
  return networkFamily(wallet.network);
}

const KNOWN_CHAINS = ChainRegistry.fromConfig(undefined, { solana: true });

/** `eip155:84532` → `base-sepolia` (the chain registry's built-in names); an unknown network as it is. */
export function networkName(network: string): string {
  return KNOWN_CHAINS.resolveAny(network)?.name ?? network;
}

/** A chain name as the server spells one (`base`, `solana-devnet`), or a CAIP-2 network (EVM or Solana). */
const CHAIN_ARGUMENT = /^(?:[a-z0-9-]{1,32}|eip155:[1-9][0-9]{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{32})$/;

/** `--chain` of `xx agent wallets add`, checked before anything is asked of the server (exit 2 otherwise). */
export function checkChainArgument(chain: string): string {
  if (!CHAIN_ARGUMENT.test(chain))
    throw badArgument('--chain', 'base, base-sepolia, solana, solana-devnet, or another chain the server serves');
  return chain;
}

/**
 * The `chain` `xx agent wallets add --chain` sends: as given, except `solana`, which is devnet
 * (`solana-devnet`) against the local sandbox (its only Solana chain) and Solana mainnet elsewhere.
 */
export function chainToSend(chain: string, sandboxServesSolana: boolean): string {
  return chain === 'solana' && sandboxServesSolana ? 'solana-devnet' : chain;
}

/** `xx fund --chain`: `solana` or `base` (the agent's first wallet of that family). */
export function fundFamily(chain: string): ChainFamily {
  if (chain === 'solana' || chain === 'solana-devnet') return 'svm';
  if (chain === 'base' || chain === 'base-sepolia') return 'evm';
  throw badArgument('--chain', "solana or base (the agent's first wallet on that chain)");
}
