/**
 * `setSettlementOverrides(ctx, { amount })`, the Koa twin of the official servers' helper for `upto` handlers:
 * it sets the `Settlement-Overrides` response header (JSON), which the middleware reads and removes
 * (`takeSettlementOverride`) before anything leaves. What the amount may say and how it becomes raw units:
 * ../seller/settlement-amount.ts.
 *
 * Defends against: the override header reaching the buyer.
 */
import type { Context } from 'koa';
import {
  parseSettlementOverride,
  SETTLEMENT_OVERRIDES_HEADER,
  type SettlementOverride,
  type SettlementOverrides,
} from '../seller/settlement-amount.js';

export {
  resolveSettlementAmount,
  SETTLEMENT_OVERRIDES_HEADER,
  type SettlementAmount,
  type SettlementOverrides,
} from '../seller/settlement-amount.js';

/** Called by a paid `upto` handler to settle less than the maximum. */
export function setSettlementOverrides(ctx: Context, overrides: SettlementOverrides): void {
  ctx.set(SETTLEMENT_OVERRIDES_HEADER, JSON.stringify({ amount: overrides.amount }));
}

/** Reads and removes the handler's override header; `invalid` when it is not `{"amount": string}` JSON. */
export function takeSettlementOverride(ctx: Context): SettlementOverride {
  const raw = ctx.response.get(SETTLEMENT_OVERRIDES_HEADER);
  if (!raw) return { kind: 'none' };
  ctx.remove(SETTLEMENT_OVERRIDES_HEADER);
  return parseSettlementOverride(String(raw));
}
