/**
 * `selectAccept`: the first entry of a 402 challenge's `accepts` that this buyer can pay, in the seller's
 * order (the seller ranks its options; the buyer does not shop for the cheapest). An entry qualifies when its
 * scheme is one of the buyer's (default `exact`, the only one Treasury signs), its network matches one of the
 * buyer's patterns (default `eip155:*`) and — when known — is the wallet's own network (Treasury refuses the
 * others), its price is above zero, and it names the token's EIP-712 domain (`extra.name`, `extra.version`),
 * without which no EIP-3009 signature can verify.
 */
import type { PaymentRequirements } from '../x402/wire-schemas.js';

export interface SelectAcceptOptions {
  /** CAIP-2 ids or `<namespace>:*` patterns; default `['eip155:*']`. */
  networks?: readonly string[];
  /** Default `['exact']`. */
  schemes?: readonly string[];
  /** The paying wallet's network; when set, only entries on it qualify. */
  walletNetwork?: string;
}

export const DEFAULT_NETWORKS: readonly string[] = Object.freeze(['eip155:*']);
export const DEFAULT_SCHEMES: readonly string[] = Object.freeze(['exact']);

/** `eip155:84532` matches itself and `eip155:*`. */
export function networkMatches(patterns: readonly string[], network: string): boolean {
  return patterns.some((p) => p === network || (p.endsWith(':*') && network.startsWith(p.slice(0, -1)) && network.length > p.length - 1));
}

export function selectAccept(accepts: readonly PaymentRequirements[], options: SelectAcceptOptions = {}): PaymentRequirements | undefined {
  const networks = options.networks ?? DEFAULT_NETWORKS;
  const schemes = options.schemes ?? DEFAULT_SCHEMES;
  return accepts.find(
    (a) =>
      schemes.includes(a.scheme) &&
      networkMatches(networks, a.network) &&
      (options.walletNetwork === undefined || a.network === options.walletNetwork) &&
      a.amount !== '0' &&
      typeof a.extra?.name === 'string' &&
      a.extra.name !== '' &&
      typeof a.extra.version === 'string' &&
      a.extra.version !== '',
  );
}
