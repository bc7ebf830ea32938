/**
 * `xx ledger {list,revenue,export}`: the active service's transactions, revenue summary and CSV export,
 * read with the service PAT (the platform scopes the rows to that seller). `export` writes the CSV as the
 * platform produced it (formula-leading cells already neutralised there) to stdout or to `--out` (0600).
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { ledgerPageSchema, revenueSummarySchema } from '../../../shared/api-responses/seller-ledger-responses.js';
import { formatTable } from './seller-format.js';
import { act, activeService, badArgument, type ContextOf } from './seller-kit.js';

interface RangeFlags {
  from?: string;
  to?: string;
}

function dateFlag(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  // A bare date means midnight UTC of that day.
  const value = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw badArgument(flag, `expected a date such as 2026-05-01 or 2026-05-01T12:00:00Z, got "${raw}"`);
  return new Date(ms).toISOString();
}

function rangeQuery(opts: RangeFlags): Record<string, string> {
  const from = dateFlag('--from', opts.from);
  const to = dateFlag('--to', opts.to);
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

async function listLedger(
  ctx: CliContext,
  opts: RangeFlags & { endpoint?: string; limit?: string; cursor?: string },
): Promise<void> {
  const query: Record<string, string> = rangeQuery(opts);
  if (opts.endpoint !== undefined) {
    if (!/^ep_[0-9a-f]{24}$/.test(opts.endpoint))
      throw badArgument('--endpoint', `expected an endpoint id (ep_…), got "${opts.endpoint}"`);
    query.endpoint_id = opts.endpoint;
  }
  if (opts.limit !== undefined) {
    const n = Number(opts.limit);
    if (!Number.isInteger(n) || n < 1 || n > 500) throw badArgument('--limit', 'expected a whole number from 1 to 500');
    query.limit = String(n);
  }
  if (opts.cursor !== undefined) query.cursor = opts.cursor;
  const { client } = await activeService(ctx);
  const page = await ctx.spin('Loading the ledger', () =>
    client.request('GET', '/v1/ledger', { query, reply: ledgerPageSchema }),
  );
  const table = formatTable(
    ['created_at', 'amount_usd', 'endpoint_id', 'tx_hash', 'payer'],
    page.entries.map((e) => [e.created_at, e.amount_usd, e.endpoint_id, e.tx_hash, e.payer]),
    'No transactions in this range.',
  );
  ctx.out(page, page.next_cursor ? `${table}\n\nMore: xx ledger list --cursor ${page.next_cursor}` : table);
}

async function revenue(ctx: CliContext, opts: RangeFlags): Promise<void> {
  const { client } = await activeService(ctx);
  const summary = await ctx.spin('Summing revenue', () =>
    client.request('GET', '/v1/ledger/revenue', { query: rangeQuery(opts), reply: revenueSummarySchema }),
  );
  const table = formatTable(
    ['endpoint_id', 'total_usd', 'count'],
    summary.by_endpoint.map((r) => [r.endpoint_id ?? '(unattributed)', r.total_usd, r.count]),
    'No revenue in this range.',
  );
  ctx.out(
    summary,
    `Total: $${summary.total_usd} over ${summary.count} payment${summary.count === 1 ? '' : 's'}.\n${table}`,
  );
}

async function exportLedger(ctx: CliContext, opts: { format?: string; out?: string }): Promise<void> {
  const format = (opts.format ?? 'csv').toLowerCase();
  if (format !== 'csv') throw badArgument('--format', `only csv is supported, got "${opts.format}"`);
  const { client } = await activeService(ctx);
  const csv = await ctx.spin('Exporting the ledger', () =>
    client.request<string>('GET', '/v1/ledger/export', { query: { format }, raw: true }),
  );
  const rows = Math.max(0, csv.split('\n').filter((l) => l.length > 0).length - 1);
  if (opts.out) {
    await fs.writeFile(opts.out, csv, { mode: 0o600 });
    ctx.out({ format, rows, out: opts.out }, `Wrote ${rows} row${rows === 1 ? '' : 's'} to ${opts.out}.`);
    return;
  }
  if (ctx.json) {
    ctx.out({ format, rows, csv }, csv);
    return;
  }
  process.stdout.write(csv);
}

export function registerLedgerCommands(program: Command, contextOf: ContextOf): void {
  const ledger = program.command('ledger').description('Transactions of the active service');
  ledger
    .command('list')
    .description('List transactions, newest first')
    .option('--from <date>', 'from this time (inclusive), ISO 8601')
    .option('--to <date>', 'up to this time (exclusive), ISO 8601')
    .option('--endpoint <endpoint_id>', 'only this endpoint')
    .option('--limit <n>', 'page size (1-500, default 100)')
    .option('--cursor <cursor>', 'next page, from the previous listing')
    .action(
      act<RangeFlags & { endpoint?: string; limit?: string; cursor?: string }>(contextOf, (ctx, opts) =>
        listLedger(ctx, opts),
      ),
    );
  ledger
    .command('revenue')
    .description('Revenue summary per endpoint')
    .option('--from <date>', 'from this time (inclusive), ISO 8601')
    .option('--to <date>', 'up to this time (exclusive), ISO 8601')
    .action(act<RangeFlags>(contextOf, (ctx, opts) => revenue(ctx, opts)));
  ledger
    .command('export')
    .description('Export every transaction')
    .option('--format <format>', 'export format (csv)', 'csv')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(act<{ format?: string; out?: string }>(contextOf, (ctx, opts) => exportLedger(ctx, opts)));
}
