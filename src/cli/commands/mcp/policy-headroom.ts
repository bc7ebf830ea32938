/**
 * What `check_policy` calls headroom: the room left under each limit the wallet's policy sets **as it stands
 * before this payment** (nothing of it counted), the same whether the dry run allows the payment or refuses
 * it; and `headroom_usd`, the least of the dollar figures (per payment, day, week, month) — the largest payment
 * the policy's dollar limits let through now, null when it sets none.
 *
 * The API's dry run answers the engine's headroom (docs/adr/0003-policy-engine.md): after this payment when
 * allowed, as it stands when refused. So when allowed, this payment is given back: window figures plus its
 * amount, one more payment in the velocity window, and no cooling-off wait (an allowed payment is not in one;
 * the engine reports the full period that would follow it). Pure.
 *
 * Does not count: capability caps (a refusing one names its `limit` in `refusing_rules`), the agent PAT's
 * daily cap, the wallet's balance.
 */
import type { z } from 'zod';
import { formatUsd, parseUsd } from '../../../../policy/money.js';
import type { headroomSchema } from '../../../shared/api-responses/pay-responses.js';

type Headroom = z.infer<typeof headroomSchema>;

const WINDOWS = ['daily_usd', 'weekly_usd', 'monthly_usd'] as const;

/** The headroom before a payment of `amountUsd`, from the engine's figures and its decision. */
export function headroomBeforePayment(engine: Headroom, allowed: boolean, amountUsd: string): Headroom {
  if (!allowed) return { ...engine };
  const before: Headroom = { ...engine };
  const amount = parseUsd(amountUsd);
  for (const field of WINDOWS) {
    const after = engine[field];
    if (after !== undefined) before[field] = formatUsd(parseUsd(after) + amount);
  }
  if (engine.velocity_remaining !== undefined) before.velocity_remaining = engine.velocity_remaining + 1;
  if (engine.cooling_off_remaining_seconds !== undefined) before.cooling_off_remaining_seconds = 0;
  return before;
}

/** The least dollar figure of `headroom` (per payment, day, week, month); null when there is none. */
export function tightestUsd(headroom: Headroom): string | null {
  const figures = [headroom.per_tx_usd, ...WINDOWS.map((field) => headroom[field])]
    .filter((v): v is string => v !== undefined)
    .map(parseUsd);
  if (figures.length === 0) return null;
  return formatUsd(figures.reduce((least, v) => (v < least ? v : least)));
}
