/**
 * `xx fund --testnet [--print] [--amount <USD>] [--permit2]`: testnet money for the active agent. Against the
 * local sandbox (its sandbox.json names this API URL) the agent's managed wallet is funded from the sandbox
 * faucet — with `--permit2` the faucet also sends the wallet's one-time Permit2 approval that x402 `upto`
 * payments need; elsewhere the public testnet faucet URL with the agent's addresses is opened in the browser on a
 * terminal (never under --print, --json, in a pipe or in CI) and printed.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { TreasuryClient } from '../../../sdk/index.js';
import { requireBuyerBearer } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { openInBrowser } from '../../core/open-browser.js';
import { act, badArgument, usdArgument, type ContextOf } from '../seller/seller-kit.js';
import { readLocalSandbox, requestSandboxFaucet } from './local-sandbox.js';
import { fundSelfCustody } from './self-custody-commands.js';

// faucet_url is absent when the sandbox runs without its chain (TREASURY_SANDBOX_CHAIN=0).
const sandboxSchema = z.object({ api_url: z.string(), faucet_url: z.string().url().optional() }).loose();

interface FundOptions {
  testnet?: boolean;
  print?: boolean;
  amount?: string;
  permit2?: boolean;
  selfCustody?: boolean;
  keystore?: string;
  profile?: string;
}

async function fund(ctx: CliContext, opts: FundOptions): Promise<void> {
  if (!opts.testnet) throw badArgument('--testnet', 'only testnet funding exists; pass --testnet');
  const amount = usdArgument('--amount', opts.amount ?? '5');
  if (opts.selfCustody) return fundSelfCustody(ctx, { ...opts, amount }); // the keystore's address (./self-custody-commands.ts)
  if (opts.keystore !== undefined) throw badArgument('--keystore', 'only with --self-custody');
  const bearer = requireBuyerBearer(ctx, opts);
  const apiUrl = bearer.server;
  // The agent's first wallet: from its local record, else (a headless machine) the first active one the server lists.
  const wallet =
    bearer.agent?.wallets[0] ??
    (await new TreasuryClient({ apiUrl, token: bearer.token }).listWallets()).find((w) => w.status === 'active');
  const agent = { addresses: bearer.agent?.addresses ?? {} };
  const sandbox = readLocalSandbox(apiUrl, sandboxSchema);
  const faucetUrl = sandbox?.faucet_url;
  if (faucetUrl && wallet && !opts.print) {
    const res = await requestSandboxFaucet(ctx, faucetUrl, {
      address: wallet.address,
      amount_usd: amount,
      ...(opts.permit2 ? { approve_permit2: true } : {}),
    });
    const approval = typeof res.permit2_approval_tx === 'string' ? res.permit2_approval_tx : null;
    ctx.out(
      {
        funded: true,
        wallet_id: wallet.id,
        address: wallet.address,
        amount_usd: amount,
        tx_hash: res.tx_hash ?? null,
        balance_raw: res.balance_raw ?? null,
        permit2_approval_tx: approval,
      },
      `Funded ${wallet.address} with ${amount} test USDC (tx ${String(res.tx_hash)}).${approval ? ` Permit2 approved for upto payments (tx ${approval}).` : ''}`,
    );
    return;
  }
  if (opts.permit2)
    throw new CliError({
      code: 'permit2_approval_unavailable',
      userMessage:
        'Only the local sandbox faucet can send the Permit2 approval; outside it, send approve(Permit2, amount) from the wallet owner.',
    });
  const addresses = [
    ...new Set([...(wallet ? [wallet.address] : []), ...(agent.addresses.base ? [agent.addresses.base] : [])]),
  ];
  const urls = {
    base_sepolia_usdc: `https://faucet.circle.com/?network=base-sepolia&address=${addresses[0] ?? ''}`,
    ...(agent.addresses.solana
      ? { solana_devnet_usdc: `https://faucet.circle.com/?network=solana-devnet&address=${agent.addresses.solana}` }
      : {}),
  };
  // On a terminal the faucet opens in the browser; `--print`, `--json`, a pipe or CI only print (./core/open-browser.ts).
  const opened = !opts.print && !ctx.json && (await openInBrowser(urls.base_sepolia_usdc));
  ctx.out(
    { funded: false, addresses, solana: agent.addresses.solana ?? null, urls, opened },
    [
      opened
        ? 'Opened the testnet faucet in your browser. Fund these addresses with testnet USDC:'
        : `Fund these addresses with testnet USDC:`,
      ...addresses.map((a) => `  ${a}`),
      ...Object.values(urls),
    ].join('\n'),
  );
}

export function registerFundCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('fund')
    .description("Testnet funds for the agent's wallet (credentials: see xx --help)")
    .option('--testnet', 'testnet funds (required)')
    .option('--print', 'print the faucet URL instead of funding or opening it')
    .option('--amount <usd>', 'sandbox faucet amount', '5')
    .option('--permit2', 'sandbox only: also approve Permit2, the one-time step before x402 upto payments')
    .option('--self-custody', "fund the keystore's Base address (the seed you hold) instead of the managed wallet")
    .option('--keystore <name>', 'with --self-custody: the keystore (default: default)')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .action(act(contextOf, (ctx, opts: FundOptions) => fund(ctx, opts)));
}
