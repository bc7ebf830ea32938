/**
 * `xx service pat {create,list,revoke}`: the active service's PATs (what its seller middleware
 * authenticates with). Only the account owner manages them, so each command signs the owner in again.
 * `create` prints the new PAT once, since that is its purpose; `list` never shows secrets; `revoke` takes
 * effect at once and says when it was the PAT this machine's service record uses.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { createdPatSchema, patPageSchema, patViewSchema } from '../../../shared/api-responses/pat-responses.js';
import { withOwnerSession } from '../account/owner-sign-in.js';
import { formatTable } from './seller-format.js';
import { act, activeService, badArgument, flagOrPrompt, sellerPath, type ContextOf } from './seller-kit.js';

async function patCreate(ctx: CliContext, opts: { label?: string; expiresIn?: string }): Promise<void> {
  const label = await flagOrPrompt(ctx, opts.label, '--label', 'Label for the new service PAT');
  let expires: number | undefined;
  if (opts.expiresIn !== undefined) {
    expires = Number(opts.expiresIn);
    if (!Number.isInteger(expires) || expires < 60)
      throw badArgument('--expires-in', 'expected whole seconds, at least 60');
  }
  const { service } = await activeService(ctx);
  const pat = await withOwnerSession(ctx, '`xx service pat create`', (owner) =>
    ctx.spin('Minting a service PAT', () =>
      owner.request('POST', sellerPath(service, '/pats'), {
        body: { label, ...(expires ? { expires_in_seconds: expires } : {}) },
        reply: createdPatSchema,
      }),
    ),
  );
  ctx.out(
    pat,
    `${pat.pat}\n\nService PAT ${pat.id} (${label}) for ${service.slug}. Shown once: store it now (e.g. as the seller middleware's token).`,
  );
}

async function patList(ctx: CliContext): Promise<void> {
  const { service } = await activeService(ctx);
  const { pats } = await withOwnerSession(ctx, '`xx service pat list`', (owner) =>
    ctx.spin('Listing service PATs', () =>
      readEveryPage(owner, sellerPath(service, '/pats'), 'pats', { page: patPageSchema }),
    ),
  );
  ctx.out(
    { pats },
    formatTable(
      ['id', 'label', 'created_at', 'expires_at', 'state'],
      pats.map((p) => [
        p.id + (p.id === service.pat_id ? ' (this machine)' : ''),
        p.label,
        p.created_at,
        p.expires_at,
        p.revoked_at ? `revoked ${p.revoked_at}` : 'active',
      ]),
      'No service PATs.',
    ),
  );
}

async function patRevoke(ctx: CliContext, patId: string): Promise<void> {
  if (!/^pat_[0-9a-f]{24}$/.test(patId)) throw badArgument('<pat_id>', `expected a PAT id (pat_…), got "${patId}"`);
  const { service } = await activeService(ctx);
  const pat = await withOwnerSession(ctx, '`xx service pat revoke`', (owner) =>
    ctx.spin('Revoking', () =>
      owner.request('DELETE', sellerPath(service, `/pats/${encodeURIComponent(patId)}`), { reply: patViewSchema }),
    ),
  );
  const self = patId === service.pat_id;
  ctx.out(
    { ...pat, local_record_pat: self },
    `Revoked ${pat.id}.${self ? ' It was the PAT this machine uses for the service; mint a new one with `xx service pat create` and re-run `xx service init` or update the record.' : ''}`,
  );
}

export function registerServicePatCommands(service: Command, contextOf: ContextOf): void {
  const pat = service.command('pat').description('Service PATs of the active service');
  pat
    .command('create')
    .description('Mint a service PAT and print it once')
    .option('--label <label>', 'label shown in listings')
    .option('--expires-in <seconds>', 'lifetime in seconds (default: no expiry)')
    .action(act<{ label?: string; expiresIn?: string }>(contextOf, (ctx, opts) => patCreate(ctx, opts)));
  pat
    .command('list')
    .description('List service PATs (no secrets)')
    .action(act(contextOf, (ctx) => patList(ctx)));
  pat
    .command('revoke')
    .description('Revoke a service PAT at once')
    .argument('<pat_id>', 'PAT id (pat_…)')
    .action(act(contextOf, (ctx, _o, [id]) => patRevoke(ctx, id!)));
}
