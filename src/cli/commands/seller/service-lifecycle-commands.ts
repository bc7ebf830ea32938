/**
 * `xx service suspend` and `xx service resume`: suspend is a soft delete (paid requests are refused, the
 * middleware's verify call answers `seller_suspended`; endpoints and ledger are kept), resume undoes it.
 * Both use the active service's PAT.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { sellerViewSchema } from '../../../shared/api-responses/seller-responses.js';
import { act, activeService, sellerPath, type ContextOf } from './seller-kit.js';

async function setStatus(ctx: CliContext, action: 'suspend' | 'resume'): Promise<void> {
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin(action === 'suspend' ? 'Suspending' : 'Resuming', () =>
    client.request('POST', sellerPath(service, `/${action}`), { reply: sellerViewSchema }),
  );
  ctx.out(
    seller,
    action === 'suspend'
      ? `Suspended ${seller.name} (${seller.seller_id}). Paid requests are refused; endpoints and ledger are kept. Undo with \`xx service resume\`.`
      : `Resumed ${seller.name} (${seller.seller_id}); it sells again.`,
  );
}

export function registerServiceLifecycleCommands(service: Command, contextOf: ContextOf): void {
  service
    .command('suspend')
    .description('Suspend the active service (soft delete)')
    .action(act(contextOf, (ctx) => setStatus(ctx, 'suspend')));
  service
    .command('resume')
    .description('Re-activate a suspended service')
    .action(act(contextOf, (ctx) => setStatus(ctx, 'resume')));
}
