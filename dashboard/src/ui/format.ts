/** Small display helpers: dates in the reader's locale (UTC in the title), and a USD input check as the API's. */
import { isUsdString } from '../../../policy/money';

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A positive USD amount with at most 6 decimals (the API's usdAmount). */
export function usdInputError(value: string): string | null {
  if (!isUsdString(value)) return 'Enter a USD amount with at most 6 decimals, e.g. 12.50.';
  if (/^0(\.0+)?$/.test(value)) return 'A cap must be above zero; remove the cap instead.';
  return null;
}
