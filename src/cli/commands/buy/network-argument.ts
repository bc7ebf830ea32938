/**
 * `--network <chain|CAIP-2>` of `xx buy` (and the MCP `pay` tool's `network`): a chain name of the chain
 * registry (`base`, `base-sepolia`, `solana`, `solana-devnet`) or a CAIP-2 id (`eip155:84532`,
 * `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`), as the CAIP-2 id the buyer SDK's `network` option takes. Against
 * the local sandbox, `solana` is the sandbox's Solana network (devnet's id), as `xx agent wallets add --chain
 * solana` sends it (../account/wallet-chains.ts).
 *
 * Defends against: a misspelt network silently paying on the default one (an unknown name is
 * `invalid_argument`, exit 2, naming the flag). Does not: check that anything is payable there (the SDK's
 * `NoCompatibleAcceptError` lists what the seller offered).
 */
import { z } from 'zod';
import { ChainRegistry } from '../../../shared/chain-registry.js';
import { readLocalSandbox } from '../account/local-sandbox.js';
import { badArgument } from '../seller/seller-kit.js';

const CHAINS = ChainRegistry.fromConfig(undefined, { solana: true });
const CAIP2 = /^(?:eip155:[1-9][0-9]{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{32})$/;
const sandboxSchema = z
  .object({
    api_url: z.string(),
    solana_network: z
      .string()
      .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/)
      .optional(),
  })
  .loose();

/** The CAIP-2 id of `value` for a buyer talking to `apiUrl`, or undefined when it names no network. */
export function resolveNetwork(value: string, apiUrl: string): string | undefined {
  if (CAIP2.test(value)) return value;
  if (value === 'solana') {
    const sandbox = readLocalSandbox(apiUrl, sandboxSchema)?.solana_network;
    if (sandbox) return sandbox;
  }
  return CHAINS.resolveAny(value)?.network;
}

/** `--network`'s CAIP-2 id; `invalid_argument` naming `flag` when it names no network. */
export function networkArgument(flag: string, value: string | undefined, apiUrl: string): string | undefined {
  if (value === undefined) return undefined;
  const network = resolveNetwork(value, apiUrl);
  if (!network)
    throw badArgument(flag, `expected base, base-sepolia, solana, solana-devnet or a CAIP-2 id, got "${value}"`);
  return network;
}
