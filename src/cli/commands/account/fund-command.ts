/**
 * `xx fund --testnet [--wallet <id> | --chain solana|base] [--print] [--amount <USD>] [--permit2]`: testnet money
 * for one of the active agent's managed wallets (default: its first; `--chain` picks its first on that chain).
 * Against the local sandbox (its sandbox.json names this API URL) the wallet is funded from the sandbox's faucet
 * of its chain: an EVM wallet from `faucet_url` — with `--permit2` the faucet also sends the wallet's one-time
 * Permit2 approval that x402 `upto` payments need — and a Solana wallet from `solana_faucet_url` (USDC to its
 * associated token account; no SOL is needed, the facilitator pays the fees). Elsewhere the public testnet faucet
 * URL with the wallet's address is opened in the browser on a terminal (never under --print, --json, in a pipe or
 * in CI) and printed. Addresses are passed and shown as the server gave them (base58 is case-sensitive).
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { TreasuryClient } from '../../../sdk/index.js';
import { requireBuyerBearer, type BuyerBearer } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import type { ManagedWallet } from '../../core/cli-state.js';
import { openInBrowser } from '../../core/open-browser.js';
import { act, badArgument, usdArgument, type ContextOf } from '../seller/seller-kit.js';
import { readLocalSandbox, requestSandboxFaucet, sandboxFaucetsFromApi } from './local-sandbox.js';
import { fundSelfCustody } from './self-custody-commands.js';
import { fundFamily, networkName, walletFamily } from './wallet-chains.js';

// Either faucet is absent when the sandbox runs without its chain (TREASURY_SANDBOX_CHAIN=0, TREASURY_SANDBOX_SOLANA=0).
const sandboxSchema = z
  .object({
    api_url: z.string(),
    faucet_url: z.string().url().optional(),
    solana_faucet_url: z.string().url().optional(),
  })
  .loose();

interface FundOptions {
  testnet?: boolean;
  print?: boolean;
  amount?: string;
  permit2?: boolean;
  wallet?: string;
  chain?: string;
  selfCustody?: boolean;
  keystore?: string;
  profile?: string;
}

type Wallet = Pick<ManagedWallet, 'id' | 'address' | 'network'>;

/** The wallet to fund: `--wallet`, else the first of `--chain`'s family, else the first; from the local record, else the server's list. */
async function chooseWallet(bearer: BuyerBearer, opts: FundOptions): Promise<Wallet | undefined> {
  if (opts.wallet !== undefined && !/^wal_[0-9a-f]{24}$/.test(opts.wallet))
    throw badArgument('--wallet', `expected a wallet id (wal_…), got "${opts.wallet}"`);
  const family = opts.chain === undefined ? undefined : fundFamily(opts.chain);
  const fits = (w: Wallet) =>
    opts.wallet !== undefined ? w.id === opts.wallet : family === undefined || walletFamily(w) === family;
  const local = bearer.agent?.wallets.find(fits);
  if (local) return local;
  const listed = await new TreasuryClient({ apiUrl: bearer.server, token: bearer.token }).listWallets();
  const found = listed.find((w) => w.status === 'active' && fits(w));
  if (!found && (opts.wallet !== undefined || family !== undefined))
    throw new CliError({
      code: 'wallet_not_found',
      userMessage: `The agent has no active managed wallet ${opts.wallet ?? `on ${opts.chain}`} (see \`xx agent wallets list\`).`,
    });
  return found;
}

async function fundEvmFromSandbox(
  ctx: CliContext,
  wallet: Wallet,
  faucetUrl: string,
  opts: FundOptions & { amount: string },
) {
  const res = await requestSandboxFaucet(ctx, faucetUrl, {
    address: wallet.address,
    amount_usd: opts.amount,
    ...(opts.permit2 ? { approve_permit2: true } : {}),
  });
  const approval = typeof res.permit2_approval_tx === 'string' ? res.permit2_approval_tx : null;
  ctx.out(
    {
      funded: true,
      wallet_id: wallet.id,
      address: wallet.address,
      network: wallet.network,
      amount_usd: opts.amount,
      tx_hash: res.tx_hash ?? null,
      balance_raw: res.balance_raw ?? null,
      permit2_approval_tx: approval,
    },
    `Funded ${wallet.address} with ${opts.amount} test USDC (tx ${String(res.tx_hash)}).${approval ? ` Permit2 approved for upto payments (tx ${approval}).` : ''}`,
  );
}

async function fundSolanaFromSandbox(ctx: CliContext, wallet: Wallet, faucetUrl: string, amount: string) {
  const res = await requestSandboxFaucet(ctx, faucetUrl, { address: wallet.address, amount_usd: amount });
  ctx.out(
    {
      funded: true,
      wallet_id: wallet.id,
      address: wallet.address,
      network: wallet.network,
      amount_usd: amount,
      token_account: res.token_account ?? null,
      balance_raw: res.balance_raw ?? null,
    },
    `Funded ${wallet.address} with ${amount} test USDC on ${networkName(wallet.network)} (token account ${String(res.token_account)}).`,
  );
}

/** Outside the sandbox (or with --print): the public faucet URLs with the wallet's (and the agent's) addresses. */
async function printFaucetUrls(ctx: CliContext, bearer: BuyerBearer, wallet: Wallet | undefined, opts: FundOptions) {
  const agent = { addresses: bearer.agent?.addresses ?? {} };
  const solanaWallet = wallet && walletFamily(wallet) === 'svm' ? wallet.address : undefined;
  const evmWallet = wallet && walletFamily(wallet) === 'evm' ? wallet.address : undefined;
  const addresses = [
    ...new Set([...(wallet ? [wallet.address] : []), ...(agent.addresses.base ? [agent.addresses.base] : [])]),
  ];
  const solana = solanaWallet ?? agent.addresses.solana;
  const urls = {
    ...(solanaWallet
      ? {}
      : {
          base_sepolia_usdc: `https://faucet.circle.com/?network=base-sepolia&address=${evmWallet ?? addresses[0] ?? ''}`,
        }),
    ...(solana ? { solana_devnet_usdc: `https://faucet.circle.com/?network=solana-devnet&address=${solana}` } : {}),
  };
  const first = Object.values(urls)[0]!;
  // On a terminal the faucet opens in the browser; `--print`, `--json`, a pipe or CI only print (./core/open-browser.ts).
  const opened = !opts.print && !ctx.json && (await openInBrowser(first));
  ctx.out(
    { funded: false, addresses, solana: solana ?? null, urls, opened },
    [
      opened
        ? 'Opened the testnet faucet in your browser. Fund these addresses with testnet USDC:'
        : `Fund these addresses with testnet USDC:`,
      ...addresses.map((a) => `  ${a}`),
      ...Object.values(urls),
    ].join('\n'),
  );
}

async function fund(ctx: CliContext, opts: FundOptions): Promise<void> {
  if (!opts.testnet) throw badArgument('--testnet', 'only testnet funding exists; pass --testnet');
  const amount = usdArgument('--amount', opts.amount ?? '5');
  if (opts.selfCustody) return fundSelfCustody(ctx, { ...opts, amount }); // the keystore's address (./self-custody-commands.ts)
  if (opts.keystore !== undefined) throw badArgument('--keystore', 'only with --self-custody');
  if (opts.wallet !== undefined && opts.chain !== undefined) throw badArgument('--chain', 'not with --wallet');
  const bearer = requireBuyerBearer(ctx, opts);
  const wallet = await chooseWallet(bearer, opts);
  const solana = wallet !== undefined && walletFamily(wallet) === 'svm';
  if (opts.permit2 && solana)
    throw badArgument('--permit2', 'Permit2 is for EVM wallets; a Solana wallet needs no approval');
  // sandbox.json when it names this API, else the API's own word (a run outside the checkout).
  const sandbox =
    readLocalSandbox(bearer.server, sandboxSchema) ??
    (opts.print ? undefined : await sandboxFaucetsFromApi(ctx, bearer.server));
  const faucetUrl = (solana ? sandbox?.solana_faucet_url : sandbox?.faucet_url) ?? undefined;
  if (faucetUrl && wallet && !opts.print)
    return solana
      ? fundSolanaFromSandbox(ctx, wallet, faucetUrl, amount)
      : fundEvmFromSandbox(ctx, wallet, faucetUrl, { ...opts, amount });
  if (opts.permit2)
    throw new CliError({
      code: 'permit2_approval_unavailable',
      userMessage:
        'Only the local sandbox faucet can send the Permit2 approval; outside it, send approve(Permit2, amount) from the wallet owner.',
    });
  return printFaucetUrls(ctx, bearer, wallet, opts);
}

export function registerFundCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('fund')
    .description("Testnet funds for the agent's wallet (credentials: see xx --help)")
    .option('--testnet', 'testnet funds (required)')
    .option('--print', 'print the faucet URL instead of funding or opening it')
    .option('--amount <usd>', 'sandbox faucet amount', '5')
    .option('--wallet <id>', "this managed wallet (default: the agent's first)")
    .option('--chain <chain>', "solana or base: the agent's first wallet on that chain")
    .option('--permit2', 'sandbox only: also approve Permit2, the one-time step before x402 upto payments')
    .option('--self-custody', "fund the keystore's Base address (the seed you hold) instead of the managed wallet")
    .option('--keystore <name>', 'with --self-custody: the keystore (default: default)')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .action(act(contextOf, (ctx, opts: FundOptions) => fund(ctx, opts)));
}
