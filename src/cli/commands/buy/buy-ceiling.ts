/**
 * The highest price `xx buy` pays when `--max` is not given (docs/cli.md, "xx buy"): `XX_BUY_MAX_USD`, else the
 * credentials profile's `buy_max_usd` (`xx login --buy-max <usd>`), else DEFAULT_BUY_MAX_USD. Never unbounded:
 * with `--self-custody` there is no Treasury policy or PAT cap behind it, so this ceiling is the only one.
 *
 * Defends: an agent (or a typo in a URL) paying whatever a seller's 402 asks. Does not defend: a ceiling set too
 * high by the person who set it.
 */
import { loadCredentials } from '../../core/cli-state.js';
import type { CliContext } from '../../core/cli-context.js';
import { profileNameArgument, profileOf } from '../../core/profile-names.js';
import { usdArgument } from '../seller/seller-kit.js';

/** The ceiling when nothing else names one: one dollar a request. */
export const DEFAULT_BUY_MAX_USD = '1.00';

export interface BuyCeiling {
  max_usd: string;
  /** Where it came from, for the refusal's message and `--json`. */
  source: '--max' | 'XX_BUY_MAX_USD' | 'profile' | 'default';
}

export function buyCeiling(
  ctx: CliContext,
  opts: { max?: string | undefined; profile?: string | undefined },
): BuyCeiling {
  if (opts.max !== undefined) return { max_usd: usdArgument('--max', opts.max), source: '--max' };
  const fromEnv = process.env.XX_BUY_MAX_USD;
  if (fromEnv !== undefined && fromEnv !== '')
    return { max_usd: usdArgument('XX_BUY_MAX_USD', fromEnv), source: 'XX_BUY_MAX_USD' };
  const creds = loadCredentials(ctx.paths);
  // The file's own profiles only, never a key of the object prototype (../../core/profile-names.ts).
  const profile = profileOf(creds, opts.profile === undefined ? creds.active : profileNameArgument(opts.profile));
  if (profile?.buy_max_usd) return { max_usd: profile.buy_max_usd, source: 'profile' };
  return { max_usd: DEFAULT_BUY_MAX_USD, source: 'default' };
}
