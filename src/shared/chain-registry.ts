/**
 * The chains Treasury signs for, in two families:
 * - `evm`: CAIP-2 network, USDC contract and its EIP-712 domain (name, version). Base mainnet and Base Sepolia
 *   are built in; others (the local sandbox chain) come from configuration (TREASURY_EXTRA_CHAINS).
 * - `svm`: Solana mainnet and devnet (CAIP-2 ids of their genesis hashes) and their USDC mint (6 decimals),
 *   served only when a Solana RPC endpoint is configured (TREASURY_SOLANA_RPC_URL): balances and the latest
 *   blockhash are read there.
 *
 * Defends: EVM-only code handed a Solana chain by mistake — `resolve` (and `chains`) know EVM chains only,
 * typed `EvmChainInfo`; code that serves both asks `resolveAny` and switches on `family`. Does not defend:
 * a wrong mint or contract in configuration (the built-in ones are the issuers' own).
 */
import { z } from 'zod';
import { getAddress } from 'viem';

export interface EvmChainInfo {
  family: 'evm';
  name: string;
  network: `eip155:${number}`;
  chainId: number;
  usdc: `0x${string}`;
  usdcName: string;
  usdcVersion: string;
}

export interface SvmChainInfo {
  family: 'svm';
  name: string;
  network: `solana:${string}`;
  /** The USDC mint (base58). */
  usdc: string;
  /** The mint's decimals (USDC: 6, as on EVM chains). */
  decimals: number;
}

/** An EVM chain: what every EVM-only module takes (the name predates Solana support). */
export type ChainInfo = EvmChainInfo;
/** A chain of either family. */
export type AnyChainInfo = EvmChainInfo | SvmChainInfo;

const BUILT_IN: EvmChainInfo[] = [
  {
    family: 'evm',
    name: 'base',
    network: 'eip155:8453',
    chainId: 8453,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    usdcName: 'USD Coin',
    usdcVersion: '2',
  },
  {
    family: 'evm',
    name: 'base-sepolia',
    network: 'eip155:84532',
    chainId: 84532,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    usdcName: 'USDC',
    usdcVersion: '2',
  },
];

/** Solana mainnet and devnet, as x402 names them (genesis-hash CAIP-2 ids) with Circle's USDC mints. */
export const SOLANA_CHAINS: readonly SvmChainInfo[] = Object.freeze([
  {
    family: 'svm',
    name: 'solana',
    network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    decimals: 6,
  },
  {
    family: 'svm',
    name: 'solana-devnet',
    network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    usdc: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    decimals: 6,
  },
]);

const extraChainSchema = z.array(
  z
    .object({
      name: z.string().regex(/^[a-z0-9-]{1,32}$/),
      network: z.string().regex(/^eip155:[1-9][0-9]{0,15}$/),
      usdc: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
      usdc_name: z.string().min(1).max(64),
      usdc_version: z.string().min(1).max(16),
    })
    .strict(),
);

export class ChainRegistry {
  private readonly byKey = new Map<string, AnyChainInfo>();
  /** The EVM chains (what EVM-only code may list). */
  readonly chains: readonly EvmChainInfo[];
  /** Every chain served, of both families. */
  readonly all: readonly AnyChainInfo[];

  constructor(chains: readonly AnyChainInfo[]) {
    this.all = chains;
    this.chains = chains.filter((c): c is EvmChainInfo => c.family === 'evm');
    for (const chain of chains) {
      this.byKey.set(chain.name, chain);
      this.byKey.set(chain.network, chain);
    }
  }

  /** Built-in and configured EVM chains; the Solana chains too when `options.solana` (an RPC is configured). */
  static fromConfig(extraChainsJson: string | undefined, options: { solana?: boolean } = {}): ChainRegistry {
    const extras = extraChainsJson ? extraChainSchema.parse(JSON.parse(extraChainsJson)) : [];
    return new ChainRegistry([
      ...BUILT_IN,
      ...extras.map((e): EvmChainInfo => ({
        family: 'evm',
        name: e.name,
        network: e.network as `eip155:${number}`,
        chainId: Number(e.network.slice('eip155:'.length)),
        usdc: getAddress(e.usdc),
        usdcName: e.usdc_name,
        usdcVersion: e.usdc_version,
      })),
      ...(options.solana ? SOLANA_CHAINS : []),
    ]);
  }

  /** An EVM chain by short name (`base-sepolia`) or CAIP-2 id (`eip155:84532`); never a Solana one. */
  resolve(key: string): EvmChainInfo | undefined {
    const chain = this.byKey.get(key);
    return chain?.family === 'evm' ? chain : undefined;
  }

  /** A chain of either family by short name or CAIP-2 id (`solana-devnet`, `solana:EtWT…`). */
  resolveAny(key: string): AnyChainInfo | undefined {
    return this.byKey.get(key);
  }
}

/** The family of a CAIP-2 network by its namespace (`solana:` → svm, anything else evm), served or not. */
export function networkFamily(network: string): 'evm' | 'svm' {
  return network.startsWith('solana:') ? 'svm' : 'evm';
}
