/**
 * `xx service …`: register a service (POST /v1/sellers with the account session), show and list it,
 * suspend/resume (soft delete: endpoints and ledger survive), banking declaration, payouts, and the
 * service's own PATs. The service PAT from `init` is written to a 0600 record and never printed unless
 * `--show-pat` is given; `service pat create` prints the new PAT once, since that is its purpose.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { listServices, saveService, setActiveService, loadActiveService, type ServiceRecord } from '../../core/cli-state.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { withOwnerSession } from '../account/owner-sign-in.js';
import { formatFields, formatTable } from './seller-format.js';
import { act, activeService, badArgument, collect, flagOrPrompt, sellerPath, type ContextOf, type SellerView } from './seller-kit.js';

interface InitOptions {
  name?: string;
  openapiUrl?: string;
  capability?: string[];
  slug?: string;
  origin?: string;
  showPat?: boolean;
}

interface PatView {
  id: string;
  scope_type: string;
  scope_id: string;
  label: string | null;
  created_at: string;
  expires_at: string | null;
  used_at: string | null;
  revoked_at: string | null;
}

export function describeSeller(s: SellerView): string {
  return formatFields([
    ['name', s.name],
    ['seller_id', s.seller_id],
    ['slug', s.slug],
    ['status', s.status],
    ['protocol', s.protocol],
    ['payout mode', s.payout_mode],
    ['origin', s.origin],
    ['origin verified', s.origin_verified ? `yes (${s.verified_at})` : 'no'],
    ['openapi url', s.openapi_url],
    ['capabilities', s.capabilities.join(', ')],
    ['banking', `${s.banking_state}${s.legal_entity ? ` (${s.legal_entity}, ${s.country})` : ''}`],
  ]);
}

function httpUrlFlag(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badArgument(flag, `expected an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badArgument(flag, `expected an http(s) URL, got "${raw}"`);
  return raw;
}

async function initService(ctx: CliContext, opts: InitOptions): Promise<void> {
  const name = await flagOrPrompt(ctx, opts.name, '--name', 'Service name');
  if (opts.slug !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(opts.slug)) throw badArgument('--slug', 'lower-case letters, digits and dashes, up to 63 characters');
  const body = {
    name,
    ...(opts.slug ? { slug: opts.slug } : {}),
    ...(opts.openapiUrl ? { openapi_url: httpUrlFlag('--openapi-url', opts.openapiUrl) } : {}),
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
    ...(opts.origin ? { origin: httpUrlFlag('--origin', opts.origin) } : {}),
  };
  const session = await ctx.session();
  const created = await ctx.spin('Registering the service', () =>
    session.request<SellerView & { pat: string; pat_id: string; ingest?: Record<string, unknown> }>('POST', '/v1/sellers', { body }),
  );
  const record: ServiceRecord = { seller_id: created.seller_id, slug: created.slug, name: created.name, pat: created.pat, pat_id: created.pat_id, server: ctx.apiUrl() };
  await saveService(ctx.paths, record);
  await setActiveService(ctx.paths, record.seller_id);
  const { pat, ...rest } = created;
  const data = { ...rest, active: true, ...(opts.showPat ? { pat } : {}) };
  const lines = [`Registered ${created.name} (${created.seller_id}), now the active service.`, describeSeller(created)];
  if (created.ingest) lines.push(`OpenAPI ingest: ${'error_code' in created.ingest ? `failed (${String(created.ingest.error_code)}); retry with \`xx refresh\`` : refreshSummary(created.ingest)}`);
  lines.push(opts.showPat ? `Service PAT: ${pat}` : `Service PAT ${created.pat_id} saved locally (0600). Use --show-pat to print it.`);
  ctx.out(data, lines.join('\n'));
}

/** One line out of a refresh report: `added 2, changed 1, removed 0, unchanged 4`. */
export function refreshSummary(report: Record<string, unknown>): string {
  const names = (k: string) => (Array.isArray(report[k]) ? (report[k] as string[]) : []);
  const part = (k: string, label: string) => {
    const list = names(k);
    return `${label} ${list.length}${list.length ? ` (${list.join(', ')})` : ''}`;
  };
  return [part('added', 'added'), part('changed', 'changed'), part('removed', 'removed'), part('kept_for_ledger', 'kept for ledger'), `unchanged ${Number(report.unchanged ?? 0)}`].join(', ');
}

async function showService(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin('Loading the service', () => client.request<SellerView>('GET', sellerPath(service)));
  ctx.out(seller, describeSeller(seller));
}

async function listLocal(ctx: CliContext): Promise<void> {
  const records = await listServices(ctx.paths);
  const active = await loadActiveService(ctx.paths).catch(() => null);
  const rows = records.map((r) => ({ seller_id: r.seller_id, slug: r.slug, name: r.name, pat_id: r.pat_id, server: r.server, active: active?.seller_id === r.seller_id }));
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
  const session = await ctx.session();
  const { sellers } = await ctx.spin('Listing services', () => readEveryPage<{ sellers: SellerView[]; next_cursor?: string | null }>(session, '/v1/sellers', 'sellers'));
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

async function setStatus(ctx: CliContext, action: 'suspend' | 'resume'): Promise<void> {
  const { client, service } = await activeService(ctx);
  const seller = await ctx.spin(action === 'suspend' ? 'Suspending' : 'Resuming', () => client.request<SellerView>('POST', sellerPath(service, `/${action}`)));
  ctx.out(
    seller,
    action === 'suspend'
      ? `Suspended ${seller.name} (${seller.seller_id}). Paid requests are refused; endpoints and ledger are kept. Undo with \`xx service resume\`.`
      : `Resumed ${seller.name} (${seller.seller_id}); it sells again.`,
  );
}

interface BankingView {
  seller_id: string;
  legal_entity: string | null;
  country: string | null;
  state: string;
}

const describeBanking = (b: BankingView) =>
  formatFields([
    ['legal entity', b.legal_entity],
    ['country', b.country],
    ['state', b.state === 'none' ? 'none (declare with `xx service banking set`)' : b.state],
  ]);

async function bankingSet(ctx: CliContext, opts: { legalEntity?: string; country?: string }): Promise<void> {
  const legalEntity = await flagOrPrompt(ctx, opts.legalEntity, '--legal-entity', 'Legal entity name');
  const country = (await flagOrPrompt(ctx, opts.country, '--country', 'Country (ISO 3166-1 alpha-2, e.g. DE)')).trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) throw badArgument('--country', `expected a two-letter ISO 3166-1 code such as US or DE, got "${country}"`);
  const { client, service } = await activeService(ctx);
  const banking = await ctx.spin('Saving banking details', () => client.request<BankingView>('PUT', sellerPath(service, '/banking'), { body: { legal_entity: legalEntity, country } }));
  ctx.out(banking, `Declared.\n${describeBanking(banking)}`);
}

async function bankingStatus(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const banking = await ctx.spin('Loading banking details', () => client.request<BankingView>('GET', sellerPath(service, '/banking')));
  ctx.out(banking, describeBanking(banking));
}

interface PayoutsView {
  seller_id: string;
  payout_mode: string;
  accrued_usd: string;
  flushes: Array<{ id: string; amount_usd: string; created_at: string }>;
  next_cursor?: string | null;
}

async function payouts(ctx: CliContext, opts: { flush?: boolean }): Promise<void> {
  const { client, service } = await activeService(ctx);
  let first: PayoutsView | undefined;
  if (opts.flush) {
    first = await withOwnerSession(ctx, '`xx service payouts --flush`', (owner) => ctx.spin('Flushing accrued payables', () => owner.request<PayoutsView>('POST', sellerPath(service, '/payouts/flush'))));
  }
  // The flush answers the history's first page; the rest (or all of it, without --flush) is read page by page.
  const view = await ctx.spin('Loading payouts', () => readEveryPage(client, sellerPath(service, '/payouts'), 'flushes', first));
  const head =
    view.payout_mode === 'direct'
      ? 'Payout mode: direct (buyers pay your pay_to address on-chain; nothing accrues here).'
      : `Payout mode: platform_mor. Accrued: $${view.accrued_usd}.`;
  ctx.out(view, `${head}\n${formatTable(['flush', 'amount_usd', 'created_at'], view.flushes.map((f) => [f.id, f.amount_usd, f.created_at]), 'No flushes yet.')}`);
}

async function patCreate(ctx: CliContext, opts: { label?: string; expiresIn?: string }): Promise<void> {
  const label = await flagOrPrompt(ctx, opts.label, '--label', 'Label for the new service PAT');
  let expires: number | undefined;
  if (opts.expiresIn !== undefined) {
    expires = Number(opts.expiresIn);
    if (!Number.isInteger(expires) || expires < 60) throw badArgument('--expires-in', 'expected whole seconds, at least 60');
  }
  const { service } = await activeService(ctx);
  const pat = await withOwnerSession(ctx, '`xx service pat create`', (owner) =>
    ctx.spin('Minting a service PAT', () => owner.request<PatView & { pat: string }>('POST', sellerPath(service, '/pats'), { body: { label, ...(expires ? { expires_in_seconds: expires } : {}) } })),
  );
  ctx.out(pat, `${pat.pat}\n\nService PAT ${pat.id} (${label}) for ${service.slug}. Shown once: store it now (e.g. as the seller middleware's token).`);
}

async function patList(ctx: CliContext): Promise<void> {
  const { service } = await activeService(ctx);
  const { pats } = await withOwnerSession(ctx, '`xx service pat list`', (owner) =>
    ctx.spin('Listing service PATs', () => readEveryPage<{ pats: PatView[]; next_cursor?: string | null }>(owner, sellerPath(service, '/pats'), 'pats')),
  );
  ctx.out(
    { pats },
    formatTable(
      ['id', 'label', 'created_at', 'expires_at', 'state'],
      pats.map((p) => [p.id + (p.id === service.pat_id ? ' (this machine)' : ''), p.label, p.created_at, p.expires_at, p.revoked_at ? `revoked ${p.revoked_at}` : 'active']),
      'No service PATs.',
    ),
  );
}

async function patRevoke(ctx: CliContext, patId: string): Promise<void> {
  if (!/^pat_[0-9a-f]{24}$/.test(patId)) throw badArgument('<pat_id>', `expected a PAT id (pat_…), got "${patId}"`);
  const { service } = await activeService(ctx);
  const pat = await withOwnerSession(ctx, '`xx service pat revoke`', (owner) => ctx.spin('Revoking', () => owner.request<PatView>('DELETE', sellerPath(service, `/pats/${encodeURIComponent(patId)}`))));
  const self = patId === service.pat_id;
  ctx.out(
    { ...pat, local_record_pat: self },
    `Revoked ${pat.id}.${self ? ' It was the PAT this machine uses for the service; mint a new one with `xx service pat create` and re-run `xx service init` or update the record.' : ''}`,
  );
}

export function registerServiceCommands(program: Command, contextOf: ContextOf): void {
  const service = program.command('service').description('Register and manage your seller service');

  service
    .command('init')
    .description('Register a service (uses the account session) and make it active')
    .option('--name <name>', 'service name')
    .option('--openapi-url <url>', 'OpenAPI document to ingest endpoints from')
    .option('--capability <tag>', 'capability tag (repeatable)', collect)
    .option('--slug <slug>', 'URL-safe identifier (default: from the name)')
    .option('--origin <url>', 'origin that serves your API (for verify and status)')
    .option('--show-pat', 'print the service PAT (it is saved locally either way)')
    .action(act<InitOptions>(contextOf, (ctx, opts) => initService(ctx, opts)));

  service.command('show').description('Show the active service').action(act(contextOf, (ctx) => showService(ctx)));
  service
    .command('list')
    .description('Services on this machine (--remote: on the account)')
    .option('--remote', 'list the account’s services from the platform')
    .action(act<{ remote?: boolean }>(contextOf, (ctx, opts) => (opts.remote ? listRemote(ctx) : listLocal(ctx))));
  service
    .command('switch')
    .description('Make a local service the active one')
    .argument('<service>', 'slug or seller_id')
    .action(act(contextOf, (ctx, _o, [ref]) => switchService(ctx, ref!)));
  service.command('suspend').description('Suspend the active service (soft delete)').action(act(contextOf, (ctx) => setStatus(ctx, 'suspend')));
  service.command('resume').description('Re-activate a suspended service').action(act(contextOf, (ctx) => setStatus(ctx, 'resume')));

  const banking = service.command('banking').description('Legal entity and country for payouts');
  banking
    .command('set')
    .description('Declare the legal entity and country')
    .option('--legal-entity <name>', 'legal entity name')
    .option('--country <code>', 'ISO 3166-1 alpha-2 country code')
    .action(act<{ legalEntity?: string; country?: string }>(contextOf, (ctx, opts) => bankingSet(ctx, opts)));
  banking.command('status').description('Declared or verified state').action(act(contextOf, (ctx) => bankingStatus(ctx)));

  service
    .command('payouts')
    .description('Accrued payables and flush history')
    .option('--flush', 'record a payout of everything accrued (platform_mor only)')
    .action(act<{ flush?: boolean }>(contextOf, (ctx, opts) => payouts(ctx, opts)));

  const pat = service.command('pat').description('Service PATs of the active service');
  pat
    .command('create')
    .description('Mint a service PAT and print it once')
    .option('--label <label>', 'label shown in listings')
    .option('--expires-in <seconds>', 'lifetime in seconds (default: no expiry)')
    .action(act<{ label?: string; expiresIn?: string }>(contextOf, (ctx, opts) => patCreate(ctx, opts)));
  pat.command('list').description('List service PATs (no secrets)').action(act(contextOf, (ctx) => patList(ctx)));
  pat
    .command('revoke')
    .description('Revoke a service PAT at once')
    .argument('<pat_id>', 'PAT id (pat_…)')
    .action(act(contextOf, (ctx, _o, [id]) => patRevoke(ctx, id!)));
}
