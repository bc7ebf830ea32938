/**
 * A keystore's Solana key for self-custody payments (docs/cli.md, "Self-custody payments"): the SLIP-0010
 * Ed25519 key at m/44'/501'/0'/0' (hd-addresses.ts, micro-key-producer's slip10) — the `Solana address`
 * `xx init` prints — as a kit `TransactionPartialSigner` for the official `@x402/svm` client scheme, and the
 * Solana network and RPC endpoint it pays through, and the USDC read there.
 *
 * The signer opens the keystore only inside `signTransactions` (the passphrase asked for once, before the
 * request), derives the key, makes a non-extractable WebCrypto key pair of it, signs, and wipes the seed and
 * the secret bytes; the key is never stored in the signer, written, sent or logged.
 *
 * The chain: the local sandbox's (`solana_rpc_url`, `solana_network` in `sandbox.json` when it names the CLI's
 * API URL), else `XX_SOLANA_RPC_URL`, else the public devnet (`XX_ENV` dev, qa) or mainnet (prod, preprod)
 * endpoint. In the sandbox the RPC must be a loopback URL (`solana_rpc_not_loopback`, exit 2).
 *
 * Defends against: signing anything but an x402 exact transfer of the network's USDC by the keystore's own key
 * with another fee payer (each message is decoded first and must be exactly that shape, svm-exact-transfer.ts:
 * compute budget, one TransferChecked from the key's own associated token account with 6 decimals, at most one
 * memo, exactly two signers — anything else, another mint, another source account or an SPL Approve or System
 * transfer beside the payment included, is `unsupported_signature`);
 * a keystore whose header names another Solana address than its seed derives (`keystore_mismatch`, nothing
 * signed); the sandbox's payments leaving the machine through a copied RPC setting.
 * Does not defend against: malware on the machine while the command runs, or a weak passphrase
 * (seed-keystore.ts); an RPC endpoint that lies about the mint or the blockhash (the facilitator and the chain
 * refuse what does not hold).
 */
import {
  address as toAddress,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  type Address,
  type TransactionPartialSigner,
} from '@solana/kit';
import { z } from 'zod';
import { ChainRegistry } from '../../../shared/chain-registry.js';
import { isLoopbackHttpUrl } from '../../../shared/loopback-host.js';
import { formatUsd } from '../../../../policy/money.js';
import { associatedTokenAccount } from '../../../sdk/index.js';
import { readSvmExactPayment } from '../../../sdk/svm-exact-transfer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { solanaKey } from './hd-addresses.js';
import { readLocalSandbox } from './local-sandbox.js';
import { openMnemonic, type Keystore } from './seed-keystore.js';

/** The chains Treasury knows, Solana's included (the registry's names, networks and USDC mints). */
const CHAINS = ChainRegistry.fromConfig(undefined, { solana: true });
export const SOLANA_MAINNET = CHAINS.resolveAny('solana')!.network;
export const SOLANA_DEVNET = CHAINS.resolveAny('solana-devnet')!.network;
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const PUBLIC_SOLANA_RPC: Record<string, string> = {
  [SOLANA_MAINNET]: 'https://api.mainnet-beta.solana.com',
  [SOLANA_DEVNET]: 'https://api.devnet.solana.com',
};
/** USDC's mint on a Solana network the registry knows. */
const usdcMint = (network: string): string | undefined => CHAINS.resolveAny(network)?.usdc;

const sandboxSchema = z
  .object({
    api_url: z.string(),
    solana_rpc_url: z.string().url().optional(),
    solana_usdc_mint: z
      .string()
      .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
      .optional(),
    solana_network: z
      .string()
      .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/)
      .optional(),
  })
  .loose();

export interface SolanaChain {
  network: string;
  rpcUrl: string;
  /** USDC's mint there. */
  usdc: string;
  sandbox: boolean;
}

function httpUrlOrRefuse(value: string, name: string): string {
  let ok = false;
  try {
    ok = /^https?:$/.test(new URL(value).protocol);
  } catch {
    ok = false;
  }
  if (!ok) throw new CliError({ code: 'invalid_env', userMessage: `${name} must be an http(s) URL.`, exitCode: 2 });
  return value;
}

/** The Solana network and RPC endpoint a keystore's Solana key pays through. */
export function localSolanaChain(ctx: CliContext): SolanaChain {
  const sandbox = readLocalSandbox(ctx.apiUrl(), sandboxSchema);
  const fromEnv = process.env.XX_SOLANA_RPC_URL || undefined;
  if (sandbox?.solana_rpc_url || (sandbox && fromEnv)) {
    const rpcUrl = httpUrlOrRefuse(fromEnv ?? sandbox.solana_rpc_url!, 'XX_SOLANA_RPC_URL');
    // The only hosts a sandbox's Solana RPC may be on: loopback, by the shared rule (src/shared/loopback-host.ts).
    if (!isLoopbackHttpUrl(rpcUrl))
      throw new CliError({
        code: 'solana_rpc_not_loopback',
        userMessage: `The sandbox's Solana RPC must be on this machine (a loopback URL), not ${new URL(rpcUrl).host}.`,
        exitCode: 2,
        details: { flag: 'XX_SOLANA_RPC_URL' },
      });
    const network = sandbox.solana_network ?? SOLANA_DEVNET;
    return {
      network,
      rpcUrl,
      usdc: sandbox.solana_usdc_mint ?? usdcMint(network) ?? usdcMint(SOLANA_DEVNET)!,
      sandbox: true,
    };
  }
  const network = ctx.env.name === 'prod' || ctx.env.name === 'preprod' ? SOLANA_MAINNET : SOLANA_DEVNET;
  const rpcUrl = httpUrlOrRefuse(fromEnv ?? PUBLIC_SOLANA_RPC[network]!, 'XX_SOLANA_RPC_URL');
  return { network, rpcUrl, usdc: usdcMint(network)!, sandbox: false };
}

/** `owner`'s USDC on `chain` (0 when its token account does not exist), read now. */
export async function readSolanaUsdc(
  chain: SolanaChain,
  owner: string,
): Promise<{ balance_raw: string; balance_usd: string }> {
  try {
    const rpc = createSolanaRpc(chain.rpcUrl);
    const ata = toAddress(await associatedTokenAccount(owner, chain.usdc, TOKEN_PROGRAM));
    const info = await rpc.getAccountInfo(ata, { encoding: 'base64' }).send();
    const raw = info.value === null ? 0n : BigInt((await rpc.getTokenAccountBalance(ata).send()).value.amount);
    return { balance_raw: raw.toString(), balance_usd: formatUsd(raw) };
  } catch {
    throw new CliError({
      code: 'chain_unreachable',
      userMessage: `Could not read the balance from ${new URL(chain.rpcUrl).host} (${chain.network}); set XX_SOLANA_RPC_URL to a reachable RPC endpoint.`,
      details: { network: chain.network },
    });
  }
}

/** The keystore's Solana address (its header's; no passphrase needed). */
export function keystoreSolanaAddress(keystore: Keystore): Address {
  const address = keystore.addresses.solana;
  if (!address || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address))
    throw new CliError({
      code: 'no_solana_address',
      userMessage: `The keystore "${keystore.name}" has no Solana address (made with --chain base); import its phrase with \`xx wallet import\`.`,
      details: { keystore: keystore.name },
    });
  return address as Address;
}

function refuse(what: string): never {
  throw new CliError({
    code: 'unsupported_signature',
    userMessage: `The self-custody Solana key signs x402 transfers only, not ${what}.`,
  });
}

/** Opens the keystore, derives the Solana key, signs with it, wipes the secret bytes. */
async function withSolanaKey<T>(
  keystore: Keystore,
  passphrase: string,
  expected: Address,
  sign: (signer: TransactionPartialSigner) => Promise<T>,
): Promise<T> {
  const mnemonic = await openMnemonic(keystore, passphrase); // wrong_passphrase: nothing signed
  const { secretKey } = solanaKey(mnemonic);
  try {
    const signer = await createKeyPairSignerFromPrivateKeyBytes(secretKey);
    if (signer.address !== expected)
      throw new CliError({
        code: 'keystore_mismatch',
        userMessage: `The keystore "${keystore.name}" opens to another Solana address than its header names; nothing was signed.`,
        details: { keystore: keystore.name, header_address: expected },
      });
    return await sign(signer);
  } finally {
    secretKey.fill(0);
  }
}

/**
 * The keystore's Solana key as a kit signer of x402 exact transfers of `usdcMint` (the network's USDC); the
 * passphrase is `passphrase`.
 */
export function keystoreSolanaSigner(
  keystore: Keystore,
  passphrase: string,
  usdcMint: string,
): TransactionPartialSigner {
  const address = keystoreSolanaAddress(keystore);
  return {
    address,
    async signTransactions(transactions) {
      for (const tx of transactions) {
        let transfer;
        try {
          transfer = await readSvmExactPayment(tx.messageBytes);
        } catch {
          refuse('this transaction');
        }
        if (transfer.authority !== address || transfer.feePayer === address) refuse('a transfer by another key');
        if (transfer.mint !== usdcMint) refuse('a transfer of another token than USDC');
      }
      return withSolanaKey(keystore, passphrase, address, (signer) => signer.signTransactions(transactions));
    },
  };
}
