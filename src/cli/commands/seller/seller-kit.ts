/**
 * Shared pieces of the seller commands: the action wrapper (context + error rendering), flag-or-prompt
 * input, repeatable-flag collectors, argument checks that fail with exit 2 and name the flag, and the
 * two ways a seller command reaches the platform (the active service PAT, or the owner's fresh sign-in with the
 * seed, ../account/owner-sign-in.ts, for what only the owner may do: registering a service, listing the
 * account's services, minting service PATs, flushing payouts).
 */
import type { Command } from 'commander';
import { CliError } from '../../core/cli-error.js';
import type { ApiClient } from '../../core/api-client.js';
import type { CliContext } from '../../core/cli-context.js';
import type { ServiceRecord } from '../../core/cli-state.js';
import { runCommand } from '../../core/run-command.js';

export type ContextOf = (cmd: Command) => CliContext;

/** The API's seller and endpoint views, defined once in src/shared/api-responses/. */
export type { EndpointView, SellerView } from '../../../shared/api-responses/seller-responses.js';

/**
 * Commander action for a seller command: builds the context from the command, runs `fn` under
 * `runCommand` (which renders CliErrors and sets the exit code). `fn` gets the positional arguments and
 * the command's own options.
 */
export function act<O = Record<string, unknown>>(
  contextOf: ContextOf,
  fn: (ctx: CliContext, opts: O, args: string[]) => Promise<void>,
) {
  return async (...params: unknown[]): Promise<void> => {
    const cmd = params[params.length - 1] as Command;
    const opts = cmd.opts() as O;
    const args = params.slice(0, -2).filter((a): a is string => typeof a === 'string');
    const ctx = contextOf(cmd);
    await runCommand(ctx, () => fn(ctx, opts, args));
  };
}

/** Commander collector for repeatable flags (`--capability a --capability b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A bad value for a flag: exit 2, naming the flag. */
export function badArgument(flag: string, message: string): CliError {
  return new CliError({ code: 'invalid_argument', userMessage: `${flag}: ${message}`, exitCode: 2, details: { flag } });
}

/** `flag`'s value as whole seconds from `min` to `max` (at most three digits), else invalid_argument (exit 2). */
export function wholeSecondsArgument(flag: string, raw: string, min: number, max: number): number {
  const seconds = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds >= min && seconds <= max)) throw badArgument(flag, `expected whole seconds from ${min} to ${max}`);
  return seconds;
}

/** The flag's value, or a prompt for it (which fails with exit 2 naming the flag when not interactive). */
export async function flagOrPrompt(
  ctx: CliContext,
  value: string | undefined,
  flag: string,
  message: string,
): Promise<string> {
  if (value !== undefined && value !== '') return value;
  return ctx.prompt.input({ message, flag });
}

/** USD amounts as the platform takes them: `0.05`, `$0.05` → `0.05`; anything else is exit 2. */
export function usdArgument(flag: string, raw: string): string {
  const value = raw.trim().replace(/^\$/, '');
  if (!/^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$/.test(value))
    throw badArgument(flag, `expected a USD amount such as 0.05 (at most 6 decimals), got "${raw}"`);
  return value;
}

/** `--route-price /path=0.01` (repeatable) → `{ "/path": "0.01" }`; `=0` or `=` marks a free route. */
export function parseRoutePrices(entries: string[] | undefined): Record<string, string> | undefined {
  if (!entries || entries.length === 0) return undefined;
  const out: Record<string, string> = Object.create(null);
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    if (at <= 0) throw badArgument('--route-price', `expected path=USD such as /search/deep=0.10, got "${entry}"`);
    const path = entry.slice(0, at).trim();
    const price = entry.slice(at + 1).trim();
    if (!path.startsWith('/')) throw badArgument('--route-price', `the path must start with "/", got "${path}"`);
    if (path === '__proto__') throw badArgument('--route-price', 'invalid path');
    out[path] = price === '' ? '' : usdArgument('--route-price', price);
  }
  return { ...out };
}

/**
 * An http(s) URL given as `flag`, else exit 2 naming the flag: one that does not parse says what it got; one
 * of another scheme says `schemeMessage` (by default the same).
 */
export function httpUrlArgument(flag: string, raw: string, schemeMessage?: string): URL {
  const got = `expected an http(s) URL, got "${raw}"`;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url) throw badArgument(flag, got);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badArgument(flag, schemeMessage ?? got);
  return url;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function methodArgument(raw: string): string {
  const m = raw.trim().toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(m))
    throw badArgument('--method', `expected one of ${HTTP_METHODS.join(', ')}, got "${raw}"`);
  return m;
}

/** The active service and a client carrying its service PAT. */
export async function activeService(ctx: CliContext): Promise<{ client: ApiClient; service: ServiceRecord }> {
  return ctx.service();
}

/** The seller path of the active service, e.g. `/v1/sellers/sel_…`. */
export function sellerPath(service: ServiceRecord, suffix = ''): string {
  return `/v1/sellers/${encodeURIComponent(service.seller_id)}${suffix}`;
}
