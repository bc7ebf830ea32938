/**
 * The seller's Solana offer (option `solana` of the Koa middleware and the gate, docs/seller-middleware.md):
 * its options, the small table of Solana networks the paywall sells on, and the one-time check of the option
 * into a frozen offer. Every problem is appended to `problems`, so one `X402ConfigError` lists them all with the
 * other options' problems.
 *
 * Defends against: a Solana paywall that cannot collect or collects the wrong thing — a pay-to that is not a
 * 32-byte base58 address (`@solana/kit`'s `isAddress`), a network the official `@x402/svm` scheme does not
 * accept (only the genesis CAIP-2 ids of mainnet, devnet and testnet), an asset that is not an address (the
 * network's USDC by default, from `@x402/svm`'s own table), no facilitator or two of them.
 * Does not defend against: a pay-to the seller does not control, or whose USDC token account does not exist
 * yet (the buyer's transfer then fails on chain and nothing is settled).
 */
import { isAddress } from '@solana/kit';
import { getDefaultAsset, SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2, SOLANA_TESTNET_CAIP2 } from '@x402/svm';
import type { FacilitatorLike } from '../facilitator-client.js';

/** The networks a Solana offer may name: the CAIP-2 ids `@x402/svm` accepts (devnet is the default). */
export const SOLANA_NETWORKS: readonly string[] = [SOLANA_MAINNET_CAIP2, SOLANA_DEVNET_CAIP2, SOLANA_TESTNET_CAIP2];
export const DEFAULT_SOLANA_NETWORK = SOLANA_DEVNET_CAIP2;

/** Whether `network` is a Solana CAIP-2 id (any cluster): its addresses are base58 and compared exactly. */
export const isSolanaNetwork = (network: string): boolean => network.startsWith('solana:');

export interface SolanaOfferOptions {
  /** The seller's Solana address (base58): buyers pay its USDC associated token account. */
  pay_to: string;
  /** CAIP-2 id; default devnet, solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1. */
  network?: string;
  /** The Solana facilitator's base URL (its GET /supported names the fee payer). */
  facilitator_url?: string;
  /** Or a facilitator object (the official `FacilitatorClient` shape, with `getSupported()`). */
  facilitator?: FacilitatorLike;
  /** The SPL mint; default the network's USDC. */
  asset?: string;
}

export interface ResolvedSolanaOffer {
  network: string;
  payTo: string;
  asset: string;
  facilitatorUrl: string | undefined;
}

/** Checks `value` (the `solana` option); undefined when absent or wrong (then `problems` says why). */
export function checkSolanaOffer(
  value: unknown,
  problems: string[],
  checkUrl: (label: string, url: string, problems: string[]) => string | undefined,
): ResolvedSolanaOffer | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push('solana must be an object { pay_to, network?, facilitator_url | facilitator, asset? }');
    return undefined;
  }
  const o = value as Partial<Record<keyof SolanaOfferOptions, unknown>>;
  const before = problems.length;
  const network = o.network === undefined ? DEFAULT_SOLANA_NETWORK : o.network;
  if (typeof network !== 'string' || !SOLANA_NETWORKS.includes(network))
    problems.push(`solana.network must be one of ${SOLANA_NETWORKS.join(', ')}`);
  if (typeof o.pay_to !== 'string' || !isAddress(o.pay_to))
    problems.push('solana.pay_to must be a base58 Solana address (32 bytes)');
  let asset: string | undefined;
  if (o.asset !== undefined) {
    if (typeof o.asset !== 'string' || !isAddress(o.asset)) problems.push('solana.asset must be a base58 mint address');
    else asset = o.asset;
  } else if (typeof network === 'string' && SOLANA_NETWORKS.includes(network)) {
    asset = getDefaultAsset(network as `${string}:${string}`).asset;
  }
  const facilitatorUrl = checkSolanaFacilitator(o, problems, checkUrl);
  if (problems.length > before) return undefined;
  return Object.freeze({ network: network as string, payTo: o.pay_to as string, asset: asset!, facilitatorUrl });
}

function checkSolanaFacilitator(
  o: Partial<Record<keyof SolanaOfferOptions, unknown>>,
  problems: string[],
  checkUrl: (label: string, url: string, problems: string[]) => string | undefined,
): string | undefined {
  const hasUrl = typeof o.facilitator_url === 'string' && o.facilitator_url !== '';
  if (o.facilitator !== undefined) {
    const f = o.facilitator as Partial<FacilitatorLike> | null;
    if (f === null || typeof f !== 'object' || typeof f.verify !== 'function' || typeof f.settle !== 'function')
      problems.push('solana.facilitator must be an object with verify() and settle() methods');
    if (hasUrl) problems.push('give solana.facilitator or solana.facilitator_url, not both');
    return undefined;
  }
  if (!hasUrl) {
    problems.push('solana.facilitator_url (or solana.facilitator) is required: it names the fee payer');
    return undefined;
  }
  return checkUrl('solana.facilitator_url', o.facilitator_url as string, problems);
}
