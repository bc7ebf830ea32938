/**
 * `xx discover <query> [--limit <n>] [--cursor <c>]`: searches the platform's public catalogue (GET
 * /discovery/search, no bearer) and prints each match's price, network, seller, resource, how it is called and
 * a summary of its input and output schemas (./discover-summary.ts); `--json` prints the API's page unchanged
 * (its `pagination.cursor` is what `--cursor` takes). The server is XX_API_URL, else the configured one.
 *
 * Defends: a query or page the API would refuse being sent (checked here first, exit 2 naming the flag);
 * control characters from sellers' names and schemas reaching the terminal (formatTable cleans cells). Does not
 * defend: what sellers declare about their resources (shown as data).
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { discoverySearchPageSchema } from '../../../shared/api-responses/discovery-responses.js';
import { formatTable } from '../seller/seller-format.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { summarizeResource } from './discover-summary.js';

interface DiscoverOptions {
  limit?: string;
  cursor?: string;
}

async function discover(ctx: CliContext, query: string, opts: DiscoverOptions): Promise<void> {
  const text = query.trim();
  if (text === '' || text.length > 200) throw badArgument('<query>', 'plain text, 1 to 200 characters');
  const limit = opts.limit === undefined ? 10 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badArgument('--limit', 'a whole number, 1 to 100');
  if (opts.cursor !== undefined && !/^[0-9]{1,5}$/.test(opts.cursor))
    throw badArgument('--cursor', 'expected the pagination.cursor of an earlier page');
  const page = await ctx.spin('Searching the catalogue', () =>
    ctx.client(undefined, ctx.apiUrl()).request('GET', '/discovery/search', {
      query: { query: text, limit, cursor: opts.cursor },
      reply: discoverySearchPageSchema,
    }),
  );
  const rows = page.resources.map(summarizeResource);
  const table = formatTable(
    ['price', 'network', 'seller', 'resource', 'call', 'input', 'output'],
    rows.map((r) => [`${r.price_usd} USD`, r.network, r.seller, r.resource, r.method, r.input, r.output]),
    `Nothing in the catalogue matches "${text}".`,
  );
  const cursor = page.pagination.cursor;
  ctx.out(page, cursor ? `${table}\nMore: xx discover ${JSON.stringify(text)} --cursor ${cursor}` : table);
}

export function registerDiscoverCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('discover')
    .description('Search the public catalogue of paid APIs (price, network, seller, resource, schemas)')
    .argument('<query>', 'plain text: names, routes, capabilities, descriptions')
    .option('--limit <n>', 'matches per page (1-100)', '10')
    .option('--cursor <cursor>', 'the pagination.cursor of an earlier page')
    .action(act(contextOf, (ctx, opts: DiscoverOptions, args) => discover(ctx, args[0] ?? '', opts)));
}
