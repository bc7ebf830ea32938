/**
 * `checkBudget`: refuses a price above the buyer's cap before anything is signed. The price is the accepts
 * entry's `amount` in raw 6-decimal token units, so one unit is one micro-USD; the cap is a USD decimal
 * string parsed to micro-USD. Both sides are bigints: no floating point, no rounding ("0.010001" is above
 * "0.01"; equal passes).
 *
 * Defends against: paying more than the caller allowed; the cap being raised silently (the error carries
 * both figures for the user to decide). Does not defend against: tokens that are not 6-decimal USD
 * stablecoins — it cannot tell them apart: the buyer keeps them from reaching it (Treasury signs only the
 * chain's USDC; local keys pay only the asset `assets` names, or USDC where the SDK knows the network,
 * buyer-assets.ts). A token `assets` names that is not a 6-decimal USD token is read as micro-USD here.
 */
import { formatUsd, parseUsd } from '../../policy/money.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import { InsufficientBudgetError } from './sdk-errors.js';

/** Throws `InsufficientBudgetError` when `requirements.amount` is above `maxPriceUsd`; no cap when undefined. */
export function checkBudget(requirements: PaymentRequirements, maxPriceUsd: string | undefined): void {
  if (maxPriceUsd === undefined) return;
  const cap = parseUsd(maxPriceUsd);
  const price = BigInt(requirements.amount);
  if (price > cap) throw new InsufficientBudgetError(formatUsd(price), formatUsd(cap), requirements);
}
