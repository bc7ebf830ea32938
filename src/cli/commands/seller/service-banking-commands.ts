/**
 * `xx service banking {set,status}`: the legal entity and country payouts go to. `set` declares them (the
 * country checked locally as an ISO 3166-1 alpha-2 code); the operator marks them verified outside the CLI.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { bankingViewSchema, type BankingView } from '../../../shared/api-responses/seller-responses.js';
import { formatFields } from './seller-format.js';
import { act, activeService, badArgument, flagOrPrompt, sellerPath, type ContextOf } from './seller-kit.js';

const describeBanking = (b: BankingView) =>
  formatFields([
    ['legal entity', b.legal_entity],
    ['country', b.country],
    ['state', b.state === 'none' ? 'none (declare with `xx service banking set`)' : b.state],
  ]);

async function bankingSet(ctx: CliContext, opts: { legalEntity?: string; country?: string }): Promise<void> {
  const legalEntity = await flagOrPrompt(ctx, opts.legalEntity, '--legal-entity', 'Legal entity name');
  const country = (await flagOrPrompt(ctx, opts.country, '--country', 'Country (ISO 3166-1 alpha-2, e.g. DE)'))
    .trim()
    .toUpperCase();
  if (!/^[A-Z]{2}$/.test(country))
    throw badArgument('--country', `expected a two-letter ISO 3166-1 code such as US or DE, got "${country}"`);
  const { client, service } = await activeService(ctx);
  const banking = await ctx.spin('Saving banking details', () =>
    client.request('PUT', sellerPath(service, '/banking'), {
      body: { legal_entity: legalEntity, country },
      reply: bankingViewSchema,
    }),
  );
  ctx.out(banking, `Declared.\n${describeBanking(banking)}`);
}

async function bankingStatus(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const banking = await ctx.spin('Loading banking details', () =>
    client.request('GET', sellerPath(service, '/banking'), { reply: bankingViewSchema }),
  );
  ctx.out(banking, describeBanking(banking));
}

export function registerServiceBankingCommands(service: Command, contextOf: ContextOf): void {
  const banking = service.command('banking').description('Legal entity and country for payouts');
  banking
    .command('set')
    .description('Declare the legal entity and country')
    .option('--legal-entity <name>', 'legal entity name')
    .option('--country <code>', 'ISO 3166-1 alpha-2 country code')
    .action(act<{ legalEntity?: string; country?: string }>(contextOf, (ctx, opts) => bankingSet(ctx, opts)));
  banking
    .command('status')
    .description('Declared or verified state')
    .action(act(contextOf, (ctx) => bankingStatus(ctx)));
}
