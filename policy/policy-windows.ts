/**
 * Where each window starts, so the caller knows what to sum: UTC calendar windows for the window caps (day
 * from 00:00 UTC, ISO week from Monday 00:00 UTC, month from the 1st 00:00 UTC — like the PAT cap reset) and
 * the start of the rolling velocity window. Pure: the time is always passed in.
 *
 * Protects against: local-time and DST drift (UTC only, by UTC calendar arithmetic; no time zone database);
 * an invalid `Date` silently producing `NaN` windows (throws `PolicyInputError`).
 * Known limits: millisecond resolution (JS `Date`). A window includes its start instant: a payment at
 * exactly 00:00:00.000 UTC counts in the new day. The velocity window excludes its start instant: a payment
 * exactly `window_seconds` ago no longer counts (`created_at > start`).
 */
import { PolicyInputError } from './policy-errors.js';
import type { WalletPolicy } from './policy-schema.js';

export interface PolicyWindows {
  /** 00:00 UTC today. */
  dayStart: Date;
  /** Monday 00:00 UTC of the current ISO week. */
  weekStart: Date;
  /** 00:00 UTC on the 1st of the current month. */
  monthStart: Date;
}

/** Midnight UTC of a calendar date; day underflow carries into month and year. (Not `Date.UTC`: it maps years 0–99 to 1900–1999.) */
function utcMidnight(year: number, month: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date;
}

function assertValidDate(now: unknown, field: string): asserts now is Date {
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new PolicyInputError(field, 'expected a valid Date');
}

export function policyWindows(now: Date): PolicyWindows {
  assertValidDate(now, 'now');
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const sinceMonday = (now.getUTCDay() + 6) % 7; // getUTCDay: Sunday = 0 … Saturday = 6
  return {
    dayStart: utcMidnight(y, m, d),
    weekStart: utcMidnight(y, m, d - sinceMonday),
    monthStart: utcMidnight(y, m, 1),
  };
}

/**
 * Start of the rolling velocity window ending at `now` (exclusive: count payments with `created_at > start`),
 * or null when the policy has no velocity cap.
 */
export function velocityWindowStart(policy: Pick<WalletPolicy, 'velocity_cap'>, now: Date): Date | null {
  assertValidDate(now, 'now');
  if (!policy.velocity_cap) return null;
  return new Date(now.getTime() - policy.velocity_cap.window_seconds * 1000);
}
