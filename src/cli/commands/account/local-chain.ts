/**
 * The chain a self-custody (keystore) account pays and is read on (docs/cli.md, "Self-custody payments"):
 * the local sandbox's chain when `sandbox.json` of `npm start` (in TREASURY_DATA_DIR, default ./.treasury)
 * names the API URL the CLI talks to — its RPC, test USDC and faucet — else Base Sepolia (XX_ENV dev, qa) or
 * Base (prod, preprod) with the built-in USDC and `XX_RPC_URL` or the public Base RPC endpoint. Also the
 * USDC balance read (ERC-20 `balanceOf`, integer raw units).
 *
 * Defends against: reading or paying on a chain other than the one the address's money is on by accident
 * (one rule, the same for `buy --self-custody`, `wallet balance` and `fund --self-custody`); a sandbox.json
 * in the folder the CLI runs from (e.g. a cloned repository's) moving payments to another chain or reads to
 * another machine — it is honoured only when it names the sandbox's chain (eip155:84532) and loopback URLs,
 * else `sandbox_chain_not_local` (exit 2).
 * Does not defend against: an RPC endpoint that lies about a balance (reads only; nothing is signed here).
 */
import { createPublicClient, erc20Abi, getAddress, http } from 'viem';
import { z } from 'zod';
import { formatUsd } from '../../../../policy/money.js';
import { ChainRegistry } from '../../../shared/chain-registry.js';
import { isLoopbackHttpUrl } from '../../../shared/loopback-host.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { readLocalSandbox } from './local-sandbox.js';

const sandboxSchema = z
  .object({
    api_url: z.string(),
    rpc_url: z.string().url().optional(),
    chain_id: z.number().int().positive().optional(),
    usdc: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/)
      .optional(),
    faucet_url: z.string().url().optional(),
  })
  .loose();

export interface LocalChain {
  network: `eip155:${number}`;
  rpcUrl: string;
  usdc: `0x${string}`;
  /** The sandbox faucet (local sandbox only). */
  faucetUrl?: string;
  sandbox: boolean;
}

const PUBLIC_RPC: Record<string, string> = {
  'eip155:8453': 'https://mainnet.base.org',
  'eip155:84532': 'https://sepolia.base.org',
};

/** The chain the sandbox runs (ops/sandbox: anvil as Base Sepolia, its USDC at Base Sepolia's address). */
const SANDBOX_NETWORK = 'eip155:84532';

/**
 * A sandbox description names the sandbox's chain, and every URL in it is on this machine; else
 * `sandbox_chain_not_local` (exit 2): nothing is read or signed through it.
 */
function assertLocalSandboxChain(sandbox: z.infer<typeof sandboxSchema>): void {
  const network = `eip155:${sandbox.chain_id}`;
  const remote = (['rpc_url', 'faucet_url'] as const).filter(
    (k) => sandbox[k] !== undefined && !isLoopbackHttpUrl(sandbox[k]),
  );
  if (network === SANDBOX_NETWORK && remote.length === 0) return;
  throw new CliError({
    code: 'sandbox_chain_not_local',
    userMessage:
      network !== SANDBOX_NETWORK
        ? `sandbox.json names chain ${network}; the local sandbox runs ${SANDBOX_NETWORK} only (is this file yours?). Nothing was signed.`
        : `sandbox.json names ${remote.join(', ')} off this machine; the local sandbox's URLs are loopback URLs (is this file yours?). Nothing was signed.`,
    exitCode: 2,
    details: { network, ...(remote.length > 0 ? { fields: remote } : {}) },
  });
}

export function localChain(ctx: CliContext): LocalChain {
  const sandbox = readLocalSandbox(ctx.apiUrl(), sandboxSchema);
  if (sandbox?.rpc_url && sandbox.chain_id && sandbox.usdc) {
    assertLocalSandboxChain(sandbox);
    return {
      network: `eip155:${sandbox.chain_id}`,
      rpcUrl: sandbox.rpc_url,
      usdc: getAddress(sandbox.usdc),
      ...(sandbox.faucet_url ? { faucetUrl: sandbox.faucet_url } : {}),
      sandbox: true,
    };
  }
  const mainnet = ctx.env.name === 'prod' || ctx.env.name === 'preprod';
  const chain = ChainRegistry.fromConfig(undefined).resolve(mainnet ? 'base' : 'base-sepolia')!;
  const rpcUrl = process.env.XX_RPC_URL || PUBLIC_RPC[chain.network]!;
  if (!/^https?:\/\//.test(rpcUrl))
    throw new CliError({ code: 'invalid_env', userMessage: 'XX_RPC_URL must be an http(s) URL.', exitCode: 2 });
  return { network: chain.network, rpcUrl, usdc: chain.usdc, sandbox: false };
}

/** The address's USDC on `chain`, read now. */
export async function readUsdc(
  chain: LocalChain,
  address: `0x${string}`,
): Promise<{ balance_raw: string; balance_usd: string }> {
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: 10_000, retryCount: 1 }) });
  let raw: bigint;
  try {
    raw = await client.readContract({ address: chain.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
  } catch {
    throw new CliError({
      code: 'chain_unreachable',
      userMessage: `Could not read the balance from ${new URL(chain.rpcUrl).host} (${chain.network}); set XX_RPC_URL to a reachable RPC endpoint.`,
      details: { network: chain.network },
    });
  }
  return { balance_raw: raw.toString(), balance_usd: formatUsd(raw) };
}
