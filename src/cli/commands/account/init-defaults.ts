/**
 * The limits `xx init` gives what it creates, unless told otherwise: the agent PAT a daily cap
 * (`--daily-cap`, 10 USD), and a managed wallet it creates a policy (`--max-per-payment`, 1 USD, and
 * `--daily-limit`, 10 USD; or the whole policy from `--policy <file>`). `none` removes one explicitly.
 * A fresh agent can then spend at most what those allow until its owner raises them on purpose.
 *
 * Defends: an onboarding that hands an agent an uncapped PAT and a wallet with no policy, unnoticed.
 * Does not defend: limits the owner lifts later (they are the owner's to set); an existing wallet, whose
 * policy init leaves as it is (it shows it).
 */
import fs from 'node:fs';
import { walletPolicySchema, type WalletPolicy } from '../../../../policy/policy-schema.js';
import { badArgument, usdArgument } from '../seller/seller-kit.js';

export const INIT_DEFAULTS = Object.freeze({ patDailyCapUsd: '10', maxPerPaymentUsd: '1', dailyLimitUsd: '10' });

export interface InitLimitOptions {
  dailyCap?: string;
  maxPerPayment?: string;
  dailyLimit?: string;
  policy?: string;
}

export interface InitLimits {
  /** The agent PAT's daily cap in USD, or null for none. */
  patDailyCapUsd: string | null;
  /** The policy a wallet created by init gets (canonical form, as the server stores it). */
  walletPolicy: WalletPolicy;
}

/** A positive USD amount, or null for `none`; anything else exits 2 naming the flag. */
export function capArgument(flag: string, raw: string): string | null {
  if (raw.trim().toLowerCase() === 'none') return null;
  const value = usdArgument(flag, raw);
  if (/^0(\.0+)?$/.test(value)) throw badArgument(flag, 'a cap must be above zero; give none to have no cap');
  return value;
}

/** The JSON in `file`, or exit 2 naming `flag`. */
export function readPolicyFile(flag: string, file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw badArgument(flag, `expected a readable JSON file (${(err as NodeJS.ErrnoException).code ?? 'not JSON'})`);
  }
}

/** `raw` as a valid policy in its canonical form, or exit 2 naming `flag` and every field at fault. */
export function checkedPolicy(flag: string, raw: unknown): WalletPolicy {
  const parsed = walletPolicySchema.safeParse(raw);
  if (!parsed.success)
    throw badArgument(flag, parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '));
  return parsed.data;
}

/** The limits from the flags and defaults, checked before anything is created. */
export function initLimits(opts: InitLimitOptions): InitLimits {
  const patDailyCapUsd = capArgument('--daily-cap', opts.dailyCap ?? INIT_DEFAULTS.patDailyCapUsd);
  if (opts.policy !== undefined) {
    if (opts.maxPerPayment !== undefined || opts.dailyLimit !== undefined)
      throw badArgument(
        '--policy',
        'cannot be combined with --max-per-payment or --daily-limit (put them in the file)',
      );
    return { patDailyCapUsd, walletPolicy: checkedPolicy('--policy', readPolicyFile('--policy', opts.policy)) };
  }
  const perTx = capArgument('--max-per-payment', opts.maxPerPayment ?? INIT_DEFAULTS.maxPerPaymentUsd);
  const daily = capArgument('--daily-limit', opts.dailyLimit ?? INIT_DEFAULTS.dailyLimitUsd);
  return {
    patDailyCapUsd,
    walletPolicy: { ...(perTx ? { per_tx_cap_usd: perTx } : {}), ...(daily ? { daily_cap_usd: daily } : {}) },
  };
}

/** A policy in a few words: `per payment 1 USD, 10 USD a day`, other rules by name, `no limits` when empty. */
export function describePolicy(policy: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof policy.per_tx_cap_usd === 'string') parts.push(`per payment ${policy.per_tx_cap_usd} USD`);
  for (const [key, unit] of [
    ['daily_cap_usd', 'day'],
    ['weekly_cap_usd', 'week'],
    ['monthly_cap_usd', 'month'],
  ] as const) {
    if (typeof policy[key] === 'string') parts.push(`${policy[key] as string} USD a ${unit}`);
  }
  const others = Object.keys(policy).filter(
    (k) => !['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd'].includes(k),
  );
  if (others.length > 0) parts.push(`and ${others.join(', ')}`);
  return parts.length > 0 ? parts.join(', ') : 'no limits';
}
