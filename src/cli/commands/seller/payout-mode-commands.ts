/**
 * `xx payout-mode {set,show}`: `direct` (buyers pay the seller's pay_to on-chain) or `platform_mor`
 * (the platform is merchant of record; payables accrue and are flushed, see `xx service payouts`).
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { sellerViewSchema } from '../../../shared/api-responses/seller-responses.js';
import { act, activeService, badArgument, sellerPath, type ContextOf } from './seller-kit.js';

const MODES = ['direct', 'platform_mor'] as const;
const explain = (mode: string) =>
  mode === 'direct'
    ? 'direct: buyers pay your pay_to address on-chain.'
    : 'platform_mor: the platform is merchant of record; payables accrue (xx service payouts).';

async function setMode(ctx: CliContext, mode: string): Promise<void> {
  if (!(MODES as readonly string[]).includes(mode))
    throw badArgument('<mode>', `expected direct or platform_mor, got "${mode}"`);
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin('Switching the payout mode', () =>
    client.request('PATCH', sellerPath(service), { body: { payout_mode: mode }, reply: sellerViewSchema }),
  );
  ctx.out(
    { seller_id: seller.seller_id, payout_mode: seller.payout_mode },
    `Payout mode is now ${explain(seller.payout_mode)}`,
  );
}

async function showMode(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin('Loading the service', () =>
    client.request('GET', sellerPath(service), { reply: sellerViewSchema }),
  );
  ctx.out(
    { seller_id: seller.seller_id, payout_mode: seller.payout_mode },
    `Payout mode: ${explain(seller.payout_mode)}`,
  );
}

export function registerPayoutModeCommands(program: Command, contextOf: ContextOf): void {
  const payoutMode = program.command('payout-mode').description('How the active service is paid');
  payoutMode
    .command('set')
    .description('Switch between direct and platform_mor')
    .argument('<mode>', 'direct | platform_mor')
    .action(act(contextOf, (ctx, _o, [mode]) => setMode(ctx, mode!)));
  payoutMode
    .command('show')
    .description('Show the payout mode')
    .action(act(contextOf, (ctx) => showMode(ctx)));
}
