/**
 * How a revenue range [from, to) is added up: the whole UTC days inside it from the per-day totals
 * (seller_revenue_days), and the parts of a day at either edge from the ledger rows themselves. A range
 * shorter than a whole day is read from the rows alone. Either bound may be open. Bounds are from 1970 to the
 * end of 9999 (../seller-schemas.ts); a `from` inside the last day of 9999 has no whole day after it (the next
 * midnight is in year 10000, which no day total spells), so that range is read from the rows alone.
 */
import { LATEST_CURSOR_TIME } from '../../db/keyset-cursor.js';

const DAY_MS = 86_400_000;

export interface RevenueRangeSplit {
  /** Ranges [from, to) to sum from the ledger rows (at most two, each shorter than a day). */
  rows: Array<{ from?: Date | undefined; to?: Date | undefined }>;
  /** Whole days to sum from the per-day totals, as YYYY-MM-DD: first included, end excluded (open when undefined); absent: none. */
  days?: { first?: string | undefined; end?: string | undefined };
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);
const floorDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
const ceilDay = (d: Date) => new Date(Math.ceil(d.getTime() / DAY_MS) * DAY_MS);

export function splitRevenueRange(from: Date | undefined, to: Date | undefined): RevenueRangeSplit {
  const start = from && ceilDay(from);
  const end = to && floorDay(to);
  if (start && start.getTime() > LATEST_CURSOR_TIME) return { rows: [{ from, to }] };
  if (start && end && start.getTime() >= end.getTime()) return { rows: [{ from, to }] };
  const rows: RevenueRangeSplit['rows'] = [];
  if (from && start && from.getTime() < start.getTime()) rows.push({ from, to: start });
  if (to && end && end.getTime() < to.getTime()) rows.push({ from: end, to });
  return { rows, days: { first: start && isoDay(start), end: end && isoDay(end) } };
}
