/**
 * What an `upto` payment settles: the paid handler (or proxied origin) names the actual charge in a
 * `Settlement-Overrides` response header (JSON `{"amount": string}`), at most the signed maximum. `amount` is
 * raw token units ("40000"), a percentage of the maximum with at most two decimals ("40%", "12.5%"; rounded
 * down), or dollars with at most six decimals ("$0.04"). No override settles the maximum. The adapters read
 * and remove the header before anything leaves; `parseSettlementOverride` and `resolveSettlementAmount` turn
 * it into raw units in integer arithmetic.
 *
 * Defends against: charging more than the buyer signed for (above the maximum is refused, nothing is
 * settled), floating-point rounding. Does not defend against a handler that charges the maximum for little
 * work — the buyer's cap on the maximum is the control.
 */
import { isUsdString, parseUsd } from '../../../policy/money.js';

export const SETTLEMENT_OVERRIDES_HEADER = 'Settlement-Overrides';

export interface SettlementOverrides {
  /** Raw units ("40000"), percent of the maximum ("40%"), or dollars ("$0.04"). */
  amount: string;
}

export type SettlementOverride =
  { kind: 'none' } | { kind: 'amount'; amount: string } | { kind: 'invalid'; reason: string };

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

/** The override a raw header value names; `invalid` when it is not `{"amount": string}` JSON. */
export function parseSettlementOverride(raw: string | undefined): SettlementOverride {
  if (!raw) return { kind: 'none' };
  try {
    const parsed = JSON.parse(raw) as { amount?: unknown };
    if (typeof parsed?.amount === 'string' && parsed.amount.length <= 64)
      return { kind: 'amount', amount: parsed.amount };
  } catch {
    // fall through
  }
  return { kind: 'invalid', reason: 'Settlement-Overrides must be JSON {"amount": string}' };
}
