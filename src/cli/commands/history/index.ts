/**
 * `xx history [--wallet <id>] [--limit <n>] [--cursor <c>] [--profile <name>]`: the agent's payments, newest
 * first — every wallet of the agent (GET /v1/agents/{id}/payments) or one (GET /v1/wallets/{id}/payments) —
 * with status, amount, network (its short name: `base-sepolia`, `solana-devnet`), payee, resource and tx hash
 * (EVM and Solana addresses and signatures shown exactly as the API gives them); `--json` prints the API's page
 * unchanged (its `next_cursor` is what `--cursor` takes). The bearer is the buyer commands' (xx --help, "Credentials").
 */
import type { Command } from 'commander';
import { agentOfBearer } from '../../core/buyer-agent.js';
import { requireBuyerBearer, type BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { printable } from '../../core/run-command.js';
import { paymentPageSchema } from '../../../shared/api-responses/payment-history-responses.js';
import { formatTable } from '../seller/seller-format.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { networkName } from '../account/wallet-chains.js';

interface HistoryOptions extends BearerFlags {
  wallet?: string;
  limit?: string;
  cursor?: string;
}

async function history(ctx: CliContext, opts: HistoryOptions): Promise<void> {
  if (opts.wallet !== undefined && !/^wal_[0-9a-f]{24}$/.test(opts.wallet))
    throw badArgument('--wallet', `expected a wallet id (wal_…), got "${opts.wallet}"`);
  const limit = opts.limit === undefined ? 20 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badArgument('--limit', 'a whole number, 1 to 500');
  if (opts.cursor !== undefined && !/^[A-Za-z0-9_-]{1,200}$/.test(opts.cursor))
    throw badArgument('--cursor', 'expected the next_cursor of an earlier page');
  const bearer = requireBuyerBearer(ctx, opts);
  const { client, agentId } = opts.wallet
    ? { client: ctx.client(bearer.token, bearer.server), agentId: undefined }
    : await agentOfBearer(ctx, bearer);
  const path = opts.wallet ? `/v1/wallets/${opts.wallet}/payments` : `/v1/agents/${agentId}/payments`;
  const page = await ctx.spin('Reading payments', () =>
    client.request('GET', path, { query: { limit, cursor: opts.cursor }, reply: paymentPageSchema }),
  );
  const table = formatTable(
    ['when', 'status', 'amount', 'network', 'payee', 'resource', 'tx'],
    page.payments.map((p) => [
      p.created_at,
      p.status,
      `${p.settled_usd ?? p.amount_usd} USD`,
      networkName(p.network),
      p.payee,
      printable(p.resource ?? ''), // the seller's words: no escape sequence reaches the terminal
      p.tx_hash ?? '',
    ]),
    'No payments yet.',
  );
  ctx.out(
    page,
    page.next_cursor
      ? `${table}\nMore: xx history${opts.wallet ? ` --wallet ${opts.wallet}` : ''} --cursor ${page.next_cursor}`
      : table,
  );
}

export function registerHistoryCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('history')
    .description("The agent's payments, newest first (status, amount, payee, resource, tx hash)")
    .option('--wallet <id>', 'only this wallet (default: every wallet of the agent)')
    .option('--limit <n>', 'payments per page (1-500)', '20')
    .option('--cursor <cursor>', 'the next_cursor of an earlier page')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .action(act(contextOf, (ctx, opts: HistoryOptions) => history(ctx, opts)));
}
