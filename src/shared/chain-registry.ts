/**
 * The chains Treasury signs for: CAIP-2 network, USDC contract and its EIP-712 domain (name, version).
 * Base mainnet and Base Sepolia are built in; others (the local sandbox chain) come from configuration.
 */
import { z } from 'zod';
import { getAddress } from 'viem';

export interface ChainInfo {
  name: string;
  network: `eip155:${number}`;
  chainId: number;
  usdc: `0x${string}`;
  usdcName: string;
  usdcVersion: string;
}

const BUILT_IN: ChainInfo[] = [
  {
    name: 'base',
    network: 'eip155:8453',
    chainId: 8453,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    usdcName: 'USD Coin',
    usdcVersion: '2',
  },
  {
    name: 'base-sepolia',
    network: 'eip155:84532',
    chainId: 84532,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    usdcName: 'USDC',
    usdcVersion: '2',
  },
];

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
  private readonly byKey = new Map<string, ChainInfo>();

  constructor(readonly chains: readonly ChainInfo[]) {
    for (const chain of chains) {
      this.byKey.set(chain.name, chain);
      this.byKey.set(chain.network, chain);
    }
  }

  static fromConfig(extraChainsJson: string | undefined): ChainRegistry {
    const extras = extraChainsJson ? extraChainSchema.parse(JSON.parse(extraChainsJson)) : [];
    return new ChainRegistry([
      ...BUILT_IN,
      ...extras.map((e) => ({
        name: e.name,
        network: e.network as `eip155:${number}`,
        chainId: Number(e.network.slice('eip155:'.length)),
        usdc: getAddress(e.usdc),
        usdcName: e.usdc_name,
        usdcVersion: e.usdc_version,
      })),
    ]);
  }

  /** Looks a chain up by short name (`base-sepolia`) or CAIP-2 id (`eip155:84532`). */
  resolve(key: string): ChainInfo | undefined {
    return this.byKey.get(key);
  }
}
