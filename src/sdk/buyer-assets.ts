/**
 * Which token a buyer pays in, per network: the caller's `assets` option of `createX402Buyer` (CAIP-2 →
 * ERC-20 address or base58 mint), else — for keys the caller holds — USDC on each network the SDK knows
 * (Base, Base Sepolia, Solana mainnet and devnet: the chain registry's addresses, src/shared/chain-registry.ts)
 * and nothing on any other network.
 * The budget (check-budget.ts) reads an entry's raw amount as micro-USD, which holds only for a 6-decimal USD
 * token: this is what keeps it true.
 *
 * Defends against: a seller's 402 naming another token (an 8-decimal BTC, any SPL mint) that a local key would
 * sign for at its raw amount, priced as if it were USDC — the entry is not a candidate, and a stored payment
 * of such an entry is not sent again; a seller naming a network the SDK knows no USDC for (Solana testnet, a
 * chain id of its choosing) to have any token it names pass — for a local key such an entry is a candidate
 * only when `assets` names that network, and then only in the asset it names.
 * Does not defend against: an `assets` entry naming a token that is not a 6-decimal USD token (the caller's
 * choice: its raw amount is read as micro-USD); a Treasury wallet without `assets` is checked by Treasury,
 * which signs its chain's USDC only.
 */
import { ChainRegistry } from '../shared/chain-registry.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import { assetAllowed, sameAsset } from './select-accept.js';

/** USDC of each network the SDK knows, by CAIP-2 id. */
const KNOWN_USDC: ReadonlyMap<string, string> = new Map(
  ChainRegistry.fromConfig(undefined, { solana: true }).all.map((c) => [c.network, c.usdc]),
);

/** USDC's address (EVM) or mint (Solana) on `network`, when the SDK knows it. */
export function knownUsdc(network: string): string | undefined {
  return KNOWN_USDC.get(network);
}

/**
 * Whether an entry's asset may be paid: the one `assets` names for its network (a network it does not name
 * pays nothing); without `assets`, a local buyer pays USDC on the networks the SDK knows and nothing elsewhere,
 * a Treasury wallet anything (Treasury refuses what it does not sign).
 */
export function assetCheck(
  assets: Readonly<Record<string, string>> | undefined,
  local: boolean,
): (requirements: PaymentRequirements) => boolean {
  if (assets !== undefined) return (a) => assetAllowed(assets, a);
  if (!local) return () => true;
  return (a) => {
    const usdc = knownUsdc(a.network);
    return usdc !== undefined && sameAsset(a.network, usdc, a.asset);
  };
}
