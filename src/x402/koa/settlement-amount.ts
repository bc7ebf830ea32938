/**
 * What an `upto` payment settles: the handler names the actual charge, at most the signed maximum.
 *
 * `setSettlementOverrides(ctx, { amount })` is the Koa twin of the official servers' helper: it sets the
 * `Settlement-Overrides` response header (JSON), which the middleware reads and removes before anything
 * leaves. `amount` is raw token units ("40000"), a percentage of the maximum with at most two decimals
 * ("40%", "12.5%"; rounded down), or dollars with at most six decimals ("$0.04"). No override settles the
 * maximum. `resolveSettlementAmount` turns it into raw units in integer arithmetic.
 *
 * Defends against: charging more than the buyer signed for (above the maximum is refused, nothing is
 * settled), floating-point rounding, and the override header reaching the buyer. Does not defend against a
 * handler that charges the maximum for little work — the buyer's cap on the maximum is the control.
 */
import type { Context } from 'koa';
import { isUsdString, parseUsd } from '../../../policy/money.js';

export const SETTLEMENT_OVERRIDES_HEADER = 'Settlement-Overrides';

export interface SettlementOverrides {
  /** Raw units ("40000"), percent of the maximum ("40%"), or dollars ("$0.04"). */
  amount: string;
}

/** Called by a paid `upto` handler to settle less than the maximum. */
export function setSettlementOverrides(ctx: Context, overrides: SettlementOverrides): void {
  ctx.set(SETTLEMENT_OVERRIDES_HEADER, JSON.stringify({ amount: overrides.amount }));
}

export type SettlementAmount = { kind: 'ok'; amount: bigint } | { kind: 'invalid'; reason: string };

/** Raw units to settle for an override (undefined: the maximum). */
export function resolveSettlementAmount(override: string | undefined, maximum: bigint): SettlementAmount {
  if (override === undefined) return { kind: 'ok', amount: maximum };
  let amount: bigint;
  const percent = /^(\d{1,3})(?:\.(\d{1,2}))?%$/.exec(override);
  if (percent) {
    const hundredths = BigInt(percent[1]!) * 100n + BigInt((percent[2] ?? '').padEnd(2, '0'));
    amount = (maximum * hundredths) / 10_000n;
  } else if (override.startsWith('$') && isUsdString(override.slice(1))) {
    amount = parseUsd(override.slice(1));
  } else if (/^(0|[1-9][0-9]{0,30})$/.test(override)) {
    amount = BigInt(override);
  } else {
    return { kind: 'invalid', reason: 'amount must be raw units, "N%" or "$N"' };
  }
  if (amount > maximum) return { kind: 'invalid', reason: `amount ${amount} is above the signed maximum ${maximum}` };
  return { kind: 'ok', amount };
}

/** Reads and removes the handler's override header; `invalid` when it is not `{"amount": string}` JSON. */
export function takeSettlementOverride(
  ctx: Context,
): { kind: 'none' } | { kind: 'amount'; amount: string } | { kind: 'invalid'; reason: string } {
  const raw = ctx.response.get(SETTLEMENT_OVERRIDES_HEADER);
  if (!raw) return { kind: 'none' };
  ctx.remove(SETTLEMENT_OVERRIDES_HEADER);
  try {
    const parsed = JSON.parse(String(raw)) as { amount?: unknown };
    if (typeof parsed?.amount === 'string' && parsed.amount.length <= 64)
      return { kind: 'amount', amount: parsed.amount };
  } catch {
    // fall through
  }
  return { kind: 'invalid', reason: 'Settlement-Overrides must be JSON {"amount": string}' };
}
