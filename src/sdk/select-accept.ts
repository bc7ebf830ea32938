/**
 * `selectAccepts`: the entries of a 402 challenge's `accepts` that this buyer can pay, in the seller's order
 * (the seller ranks its options; the buyer does not shop for the cheapest); `selectAccept` is the first. An
 * entry qualifies when its scheme is one of the buyer's (default `exact` and `upto`, the two Treasury
 * signs), its network matches one of the buyer's patterns (default `eip155:*` and `solana:*`) and — when
 * known — is the wallet's own network (Treasury refuses the others), its price is above zero, and it carries
 * what the signature needs: on an EVM network the token's EIP-712 domain (`extra.name`, `extra.version`) for
 * `exact`, the facilitator's address (`extra.facilitatorAddress`) and no transfer method but Permit2 for
 * `upto`; on Solana (`exact` only) the facilitator's fee payer (`extra.feePayer`, base58) and base58 payee and
 * mint; and, when the buyer names the asset of each network (`assets`), it is on a network named there and in
 * that asset (an ERC-20 address compared case-insensitively, a Solana mint exactly).
 *
 * Defends against: a seller naming another token than the one the buyer prices in (e.g. an 8-decimal token
 * whose raw units the budget would read as micro-USD) — when `assets` is given. Without it any asset qualifies.
 */
import type { PaymentRequirements } from '../x402/wire-schemas.js';

export interface SelectAcceptOptions {
  /** CAIP-2 ids or `<namespace>:*` patterns; default `['eip155:*', 'solana:*']`. */
  networks?: readonly string[];
  /** Default `['exact', 'upto']`. */
  schemes?: readonly string[];
  /** The paying wallet's network; when set, only entries on it qualify. */
  walletNetwork?: string;
  /**
   * The one asset each network is paid in (CAIP-2 → ERC-20 address or base58 mint); when set, an entry
   * qualifies only on a network named here and in its asset.
   */
  assets?: Readonly<Record<string, string>>;
}

export const DEFAULT_NETWORKS: readonly string[] = Object.freeze(['eip155:*', 'solana:*']);
export const DEFAULT_SCHEMES: readonly string[] = Object.freeze(['exact', 'upto']);

const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** A Solana entry: `exact` with the fee payer the facilitator co-signs with, base58 payee and mint. */
function svmSignable(a: PaymentRequirements): boolean {
  return (
    a.scheme === 'exact' &&
    typeof a.extra?.feePayer === 'string' &&
    BASE58_ADDRESS.test(a.extra.feePayer) &&
    BASE58_ADDRESS.test(a.payTo) &&
    BASE58_ADDRESS.test(a.asset) &&
    (a.extra.memo === undefined || typeof a.extra.memo === 'string')
  );
}

/** What the scheme's signature needs is in `extra`. */
function signable(a: PaymentRequirements): boolean {
  if (a.network.startsWith('solana:')) return svmSignable(a);
  if (!a.network.startsWith('eip155:')) return false;
  if (a.scheme === 'upto') {
    const method = a.extra?.assetTransferMethod;
    return (
      typeof a.extra?.facilitatorAddress === 'string' &&
      /^0x[0-9a-fA-F]{40}$/.test(a.extra.facilitatorAddress) &&
      (method === undefined || method === 'permit2')
    );
  }
  return (
    a.scheme === 'exact' &&
    nonEmpty(a.extra?.name) &&
    nonEmpty(a.extra?.version) &&
    a.extra?.assetTransferMethod === undefined
  );
}

/** `asset` is `allowed`: EVM addresses case-insensitively (checksum or not), anything else (base58) exactly. */
export function sameAsset(network: string, allowed: string, asset: string): boolean {
  return network.startsWith('eip155:') ? allowed.toLowerCase() === asset.toLowerCase() : allowed === asset;
}

/** The entry is in the asset `assets` names for its network (any asset when `assets` is undefined). */
export function assetAllowed(assets: Readonly<Record<string, string>> | undefined, a: PaymentRequirements): boolean {
  if (assets === undefined) return true;
  const allowed = Object.hasOwn(assets, a.network) ? assets[a.network] : undefined;
  return allowed !== undefined && sameAsset(a.network, allowed, a.asset);
}

/** `eip155:84532` matches itself and `eip155:*`. */
export function networkMatches(patterns: readonly string[], network: string): boolean {
  return patterns.some(
    (p) => p === network || (p.endsWith(':*') && network.startsWith(p.slice(0, -1)) && network.length > p.length - 1),
  );
}

export function selectAccepts(
  accepts: readonly PaymentRequirements[],
  options: SelectAcceptOptions = {},
): PaymentRequirements[] {
  const networks = options.networks ?? DEFAULT_NETWORKS;
  const schemes = options.schemes ?? DEFAULT_SCHEMES;
  return accepts.filter(
    (a) =>
      schemes.includes(a.scheme) &&
      networkMatches(networks, a.network) &&
      (options.walletNetwork === undefined || a.network === options.walletNetwork) &&
      a.amount !== '0' &&
      assetAllowed(options.assets, a) &&
      signable(a),
  );
}

export function selectAccept(
  accepts: readonly PaymentRequirements[],
  options: SelectAcceptOptions = {},
): PaymentRequirements | undefined {
  return selectAccepts(accepts, options)[0];
}
