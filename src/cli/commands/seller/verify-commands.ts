/**
 * `xx verify` proves the seller owns its origin: the origin must serve `/.well-known/xx-verification.txt`
 * holding the token the platform issued. On failure the command names the exact URL and the token to put
 * there, keeps the server's error_code (`well_known_not_found`, `verification_token_mismatch`,
 * `origin_unreachable`, …) and its message, and exits 1. The token is not a secret (it is served
 * publicly). `xx refresh` re-ingests the OpenAPI document and prints what changed.
 */
import type { Command } from 'commander';
import { CliError } from '../../core/cli-error.js';
import type { CliContext } from '../../core/cli-context.js';
import { formatFields } from './seller-format.js';
import {
  originVerificationSchema,
  refreshReportSchema,
  sellerViewSchema,
  verifiedSellerSchema,
  type VerifiedSeller,
} from '../../../shared/api-responses/seller-responses.js';
import { refreshSummary } from './describe-seller.js';
import { act, activeService, badArgument, sellerPath, type ContextOf } from './seller-kit.js';

async function verify(ctx: CliContext, opts: { origin?: string }): Promise<void> {
  const { client, service } = await activeService(ctx);
  if (opts.origin !== undefined) {
    let url: URL;
    try {
      url = new URL(opts.origin);
    } catch {
      throw badArgument('--origin', `expected an http(s) URL, got "${opts.origin}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw badArgument('--origin', `expected an http(s) URL, got "${opts.origin}"`);
    await ctx.spin('Setting the origin', () =>
      client.request('PATCH', sellerPath(service), { body: { origin: opts.origin }, reply: sellerViewSchema }),
    );
  }
  const info = await ctx.spin('Fetching the verification token', () =>
    client.request('GET', sellerPath(service, '/verify'), { reply: originVerificationSchema }),
  );
  if (!info.origin) {
    throw new CliError({
      code: 'origin_not_configured',
      userMessage: 'This service has no origin yet. Run `xx verify --origin https://api.example.com`.',
      exitCode: 1,
      details: { path: info.path, token: info.token },
    });
  }
  const expectedFile = `${info.origin}${info.path}`;
  let result: VerifiedSeller;
  try {
    result = await ctx.spin(`Checking ${expectedFile}`, () =>
      client.request('POST', sellerPath(service, '/verify'), { reply: verifiedSellerSchema }),
    );
  } catch (err) {
    if (!(err instanceof CliError) || err.exitCode === 130) throw err;
    throw new CliError({
      code: err.code,
      userMessage: `${err.userMessage}\nServe this file: ${expectedFile}\nWith this line in it: ${info.token}\nThen run \`xx verify\` again.`,
      exitCode: 1,
      ...(err.recovery ? { recovery: err.recovery } : {}),
      ...(err.status !== undefined ? { status: err.status } : {}),
      details: {
        ...(typeof err.details === 'object' && err.details ? err.details : {}),
        expected_file: expectedFile,
        token: info.token,
      },
    });
  }
  ctx.out(
    { ...result, expected_file: expectedFile },
    `Verified: ${info.origin} serves ${info.path}.\n${formatFields([
      ['service', `${result.name} (${result.seller_id})`],
      ['verified at', result.verified_at],
    ])}`,
  );
}

async function refresh(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const report = await ctx.spin('Re-ingesting the OpenAPI document', () =>
    client.request('POST', sellerPath(service, '/refresh'), { reply: refreshReportSchema }),
  );
  ctx.out(report, `Refreshed from ${report.openapi_url}: ${refreshSummary(report)}.`);
}

export function registerVerifyCommands(program: Command, contextOf: ContextOf): void {
  program
    .command('verify')
    .description('Prove you own the origin via /.well-known/xx-verification.txt')
    .option('--origin <url>', 'set (or change) the origin first')
    .action(act<{ origin?: string }>(contextOf, (ctx, opts) => verify(ctx, opts)));
  program
    .command('refresh')
    .description('Re-ingest the OpenAPI document and show the changes')
    .action(act(contextOf, (ctx) => refresh(ctx)));
}
