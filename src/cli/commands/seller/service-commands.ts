/**
 * `xx service …`: register a service (POST /v1/sellers with the owner's fresh sign-in, as the other owner
 * commands do), show it, list the services on this machine or on the account (GET /v1/sellers, with the
 * owner's fresh sign-in too: neither the agent PAT nor a session exchanged from it may read the account's
 * sellers), and switch the active one. The service PAT from `init` is written to a 0600 record and never
 * printed unless `--show-pat` is given. The rest of the group lives beside this file: suspend/resume
 * (./service-lifecycle-commands.ts), banking (./service-banking-commands.ts), payouts
 * (./service-payouts-command.ts) and the service's own PATs (./service-pat-commands.ts).
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import {
  listServices,
  saveService,
  setActiveService,
  loadActiveService,
  type ServiceRecord,
} from '../../core/cli-state.js';
import { readEveryPage } from '../../core/read-every-page.js';
import {
  createdSellerSchema,
  sellerPageSchema,
  sellerViewSchema,
} from '../../../shared/api-responses/seller-responses.js';
import { describeSeller, refreshSummary } from './describe-seller.js';
import { formatTable } from './seller-format.js';
import { act, activeService, badArgument, collect, flagOrPrompt, sellerPath, type ContextOf } from './seller-kit.js';
import { registerServiceBankingCommands } from './service-banking-commands.js';
import { registerServiceLifecycleCommands } from './service-lifecycle-commands.js';
import { registerServicePatCommands } from './service-pat-commands.js';
import { withOwnerSession } from '../account/owner-sign-in.js';
import { registerServicePayoutsCommand } from './service-payouts-command.js';

interface InitOptions {
  name?: string;
  openapiUrl?: string;
  capability?: string[];
  slug?: string;
  origin?: string;
  showPat?: boolean;
}

function httpUrlFlag(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badArgument(flag, `expected an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badArgument(flag, `expected an http(s) URL, got "${raw}"`);
  return raw;
}

async function initService(ctx: CliContext, opts: InitOptions): Promise<void> {
  const name = await flagOrPrompt(ctx, opts.name, '--name', 'Service name');
  if (opts.slug !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(opts.slug))
    throw badArgument('--slug', 'lower-case letters, digits and dashes, up to 63 characters');
  const body = {
    name,
    ...(opts.slug ? { slug: opts.slug } : {}),
    ...(opts.openapiUrl ? { openapi_url: httpUrlFlag('--openapi-url', opts.openapiUrl) } : {}),
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
    ...(opts.origin ? { origin: httpUrlFlag('--origin', opts.origin) } : {}),
  };
  // Registering a seller is the owner's (its answer carries a service PAT): a fresh sign-in with the seed.
  const created = await withOwnerSession(ctx, '`xx service init`', (owner) =>
    ctx.spin('Registering the service', () =>
      owner.request('POST', '/v1/sellers', { body, reply: createdSellerSchema }),
    ),
  );
  const record: ServiceRecord = {
    seller_id: created.seller_id,
    slug: created.slug,
    name: created.name,
    pat: created.pat,
    pat_id: created.pat_id,
    server: ctx.apiUrl(),
  };
  await saveService(ctx.paths, record);
  await setActiveService(ctx.paths, record.seller_id);
  const { pat, ...rest } = created;
  const data = { ...rest, active: true, ...(opts.showPat ? { pat } : {}) };
  const lines = [`Registered ${created.name} (${created.seller_id}), now the active service.`, describeSeller(created)];
  if (created.ingest)
    lines.push(
      `OpenAPI ingest: ${'error_code' in created.ingest ? `failed (${String(created.ingest.error_code)}); retry with \`xx refresh\`` : refreshSummary(created.ingest)}`,
    );
  lines.push(
    opts.showPat
      ? `Service PAT: ${pat}`
      : `Service PAT ${created.pat_id} saved locally (0600). Use --show-pat to print it.`,
  );
  ctx.out(data, lines.join('\n'));
}

async function showService(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin('Loading the service', () =>
    client.request('GET', sellerPath(service), { reply: sellerViewSchema }),
  );
  ctx.out(seller, describeSeller(seller));
}

async function listLocal(ctx: CliContext): Promise<void> {
  const records = await listServices(ctx.paths);
  const active = await loadActiveService(ctx.paths).catch(() => null);
  const rows = records.map((r) => ({
    seller_id: r.seller_id,
    slug: r.slug,
    name: r.name,
    pat_id: r.pat_id,
    server: r.server,
    active: active?.seller_id === r.seller_id,
  }));
  ctx.out(
    { services: rows },
    formatTable(
      ['', 'slug', 'name', 'seller_id', 'server'],
      rows.map((r) => [r.active ? '*' : '', r.slug, r.name, r.seller_id, r.server]),
      'No services on this machine. Register one with `xx service init --name <name>`.',
    ),
  );
}

async function listRemote(ctx: CliContext): Promise<void> {
  // Reading the account's sellers is the owner's: the stored session, exchanged from the agent PAT, is refused
  // there (`fresh_sign_in_required`), as that PAT is. A fresh sign-in with the seed, as `service init` does.
  const { sellers } = await withOwnerSession(ctx, '`xx service list --remote`', (owner) =>
    ctx.spin('Listing services', () => readEveryPage(owner, '/v1/sellers', 'sellers', { page: sellerPageSchema })),
  );
  ctx.out(
    { sellers },
    formatTable(
      ['slug', 'name', 'seller_id', 'status', 'payout', 'verified'],
      sellers.map((s) => [s.slug, s.name, s.seller_id, s.status, s.payout_mode, s.origin_verified ? 'yes' : 'no']),
      'No services on this account.',
    ),
  );
}

async function switchService(ctx: CliContext, ref: string): Promise<void> {
  const records = await listServices(ctx.paths);
  const match = records.find((r) => r.seller_id === ref || r.slug === ref);
  if (!match) throw badArgument('<service>', `no local service "${ref}"; see \`xx service list\``);
  await setActiveService(ctx.paths, match.seller_id);
  const { pat: _pat, ...shown } = match;
  ctx.out({ ...shown, active: true }, `Active service: ${match.name} (${match.seller_id}).`);
}

export function registerServiceCommands(program: Command, contextOf: ContextOf): void {
  const service = program.command('service').description('Register and manage your seller service');

  service
    .command('init')
    .description('Register a service (signs the owner in again) and make it active')
    .option('--name <name>', 'service name')
    .option('--openapi-url <url>', 'OpenAPI document to ingest endpoints from')
    .option('--capability <tag>', 'capability tag (repeatable)', collect)
    .option('--slug <slug>', 'URL-safe identifier (default: from the name)')
    .option('--origin <url>', 'origin that serves your API (for verify and status)')
    .option('--show-pat', 'print the service PAT (it is saved locally either way)')
    .action(act<InitOptions>(contextOf, (ctx, opts) => initService(ctx, opts)));

  service
    .command('show')
    .description('Show the active service')
    .action(act(contextOf, (ctx) => showService(ctx)));
  service
    .command('list')
    .description('Services on this machine (--remote: on the account)')
    .option('--remote', 'list the account’s services from the platform (the owner signs in again with the seed)')
    .action(act<{ remote?: boolean }>(contextOf, (ctx, opts) => (opts.remote ? listRemote(ctx) : listLocal(ctx))));
  service
    .command('switch')
    .description('Make a local service the active one')
    .argument('<service>', 'slug or seller_id')
    .action(act(contextOf, (ctx, _o, [ref]) => switchService(ctx, ref!)));
  registerServiceLifecycleCommands(service, contextOf);
  registerServiceBankingCommands(service, contextOf);
  registerServicePayoutsCommand(service, contextOf);
  registerServicePatCommands(service, contextOf);
}
