/**
 * `xx service payouts [--flush]`: accrued payables and the whole flush history of the active service (read
 * page by page with its PAT). `--flush` records a payout of everything accrued (platform_mor only), which
 * only the account owner may do: it signs the owner in again.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { payoutsPageSchema, type PayoutsPage } from '../../../shared/api-responses/seller-ledger-responses.js';
import { withOwnerSession } from '../account/owner-sign-in.js';
import { formatTable } from './seller-format.js';
import { act, activeService, sellerPath, type ContextOf } from './seller-kit.js';

async function payouts(ctx: CliContext, opts: { flush?: boolean }): Promise<void> {
  const { client, service } = await activeService(ctx);
  let first: PayoutsPage | undefined;
  if (opts.flush) {
    first = await withOwnerSession(ctx, '`xx service payouts --flush`', (owner) =>
      ctx.spin('Flushing accrued payables', () =>
        owner.request('POST', sellerPath(service, '/payouts/flush'), { reply: payoutsPageSchema }),
      ),
    );
  }
  // The flush answers the history's first page; the rest (or all of it, without --flush) is read page by page.
  const view = await ctx.spin('Loading payouts', () =>
    readEveryPage(client, sellerPath(service, '/payouts'), 'flushes', { page: payoutsPageSchema, first }),
  );
  const head =
    view.payout_mode === 'direct'
      ? 'Payout mode: direct (buyers pay your pay_to address on-chain; nothing accrues here).'
      : `Payout mode: platform_mor. Accrued: $${view.accrued_usd}.`;
  ctx.out(
    view,
    `${head}\n${formatTable(
      ['flush', 'amount_usd', 'status', 'tx_hash', 'created_at'],
      view.flushes.map((f) => [f.id, f.amount_usd, f.status, f.tx_hash ?? f.reason ?? '', f.created_at]),
      'No flushes yet.',
    )}`,
  );
}

export function registerServicePayoutsCommand(service: Command, contextOf: ContextOf): void {
  service
    .command('payouts')
    .description('Accrued payables and flush history')
    .option('--flush', 'record a payout of everything accrued (platform_mor only)')
    .action(act<{ flush?: boolean }>(contextOf, (ctx, opts) => payouts(ctx, opts)));
}
