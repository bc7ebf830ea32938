/**
 * The snapshot a payment is decided on: the wallet (and its account key reference), the state its policy's
 * rules read, the velocity window behind its count, its audit head and any earlier attempt with the
 * request's Idempotency-Key — read in one statement (./store/pay-statements.ts SNAPSHOT_SQL), or remembered
 * from the wallet's last write in this process (./snapshot-cache.ts). Pure functions: from the row read,
 * after a write (moved as ./rule-state.ts declares), and at a later time (the velocity window aged).
 *
 * Defends: a decision on a snapshot of another account's wallet (404) or of a revoked one (410), read or
 * remembered; a remembered velocity count that can no longer be known (`snapshotAt` gives undefined: its
 * window read on, `snapshotReadPoint`, or the wallet read again).
 * Does not defend: a remembered snapshot gone stale through another process — the write's audit row at
 * head + 1 fails then (docs/adr/0006).
 */
import type { SpendState } from '../../../policy/policy-types.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import type { AuditHead } from '../audit/audit-ledger.js';
import { AppError } from '../errors/app-error.js';
import type { WalletRow } from '../wallets/store/wallet-store.js';
import type { PreviousAttempt, SnapshotChange } from './pay-types.js';
import { stateAfterPayment } from './rule-state.js';
import { sealPolicy } from './snapshot-policy.js';
import { isoDate } from './store/pay-statements.js';
import {
  addToVelocityWindow,
  ageVelocityWindow,
  velocityReadPoint,
  type VelocityReadPoint,
  type VelocityWindow,
} from '../../../policy/velocity-window.js';

export type SnapshotWallet = WalletRow & { account_key_ref: string };

export interface PaySnapshot {
  wallet: SnapshotWallet;
  state: SpendState;
  /** The velocity cap's window (count and oldest times) when the policy sets one, else null. */
  recent: VelocityWindow | null;
  auditHead: AuditHead | null;
  previous: PreviousAttempt | null;
}

/** The row SNAPSHOT_SQL returns. */
type SnapshotRow = SnapshotWallet & {
  last_paid_at: Date | null;
  totals: Record<string, string> | null;
  recent: VelocityWindow | null;
  audit_head: AuditHead | null;
  previous: PreviousAttempt | null;
};

/** The snapshot in the rows SNAPSHOT_SQL read (none: no such wallet). */
export function snapshotFromRows(rows: ReadonlyArray<Record<string, unknown>>): PaySnapshot | undefined {
  const row = rows[0] as SnapshotRow | undefined;
  if (!row) return undefined;
  const { last_paid_at, totals, recent, audit_head, previous, ...wallet } = row;
  // Frozen as read, so that every payment decided on this snapshot (remembered or not) evaluates one parsed form.
  wallet.policy = sealPolicy(wallet.policy);
  const state: SpendState = {
    dailySpentMicro: BigInt(totals?.day ?? 0),
    weeklySpentMicro: BigInt(totals?.week ?? 0),
    monthlySpentMicro: BigInt(totals?.month ?? 0),
    lastPaymentAt: last_paid_at,
    recentCount: recent?.count ?? 0,
  };
  return { wallet: wallet as SnapshotWallet, state, recent, auditHead: audit_head, previous };
}

/** `snapshot` if it is the caller's wallet and active: 404 / 410 as `WalletService.getActive` otherwise. */
export function checkedSnapshot(snapshot: PaySnapshot | undefined, accountId: string, walletId: string): PaySnapshot {
  if (!snapshot || snapshot.wallet.account_id !== accountId) throw new AppError('wallet_not_found');
  const wallet = snapshot.wallet;
  if (wallet.status === 'revoked')
    throw new AppError('wallet_revoked', {
      fields: { wallet_id: walletId, revoked_at: wallet.revoked_at?.toISOString() ?? null },
    });
  return snapshot;
}

/** The snapshot once `change` is written on top of it: the rules' state moved as they declared, the new audit head, no earlier attempt. */
export function snapshotAfter(snapshot: PaySnapshot, change: SnapshotChange): PaySnapshot {
  if (change.spentMicro === undefined) return { ...snapshot, auditHead: change.auditHead, previous: null };
  return {
    ...snapshot,
    state: stateAfterPayment(snapshot.state, { amountMicro: change.spentMicro, at: change.at }),
    recent: snapshot.recent && addToVelocityWindow(snapshot.recent, change.at),
    auditHead: change.auditHead,
    previous: null,
  };
}

/**
 * A remembered snapshot at `now`: the velocity window aged to `now` (policy/velocity-window.ts), or undefined when
 * its count can no longer be known without reading the wallet again.
 */
export function snapshotAt(snapshot: PaySnapshot, now: Date): PaySnapshot | undefined {
  const cap = velocityCapOf(snapshot);
  if (!cap)
    return snapshot.state.recentCount === (snapshot.recent?.count ?? 0)
      ? snapshot
      : { ...snapshot, state: { ...snapshot.state, recentCount: snapshot.recent?.count ?? 0 } };
  const recent = snapshot.recent;
  if (!recent || typeof cap.window_seconds !== 'number') return undefined;
  const aged = ageVelocityWindow(recent, cap.window_seconds, now);
  if (!aged) return undefined;
  return aged === recent && snapshot.state.recentCount === recent.count ? snapshot : snapshotWithWindow(snapshot, aged);
}

/**
 * Where a remembered snapshot's velocity window is read on from at `now` (policy/velocity-window.ts), when
 * `snapshotAt` cannot age it because every payment time it knows has left the window; undefined otherwise.
 */
export function snapshotReadPoint(
  snapshot: PaySnapshot,
  now: Date,
): { windowSeconds: number; point: VelocityReadPoint } | undefined {
  const windowSeconds = velocityCapOf(snapshot)?.window_seconds;
  if (!snapshot.recent || typeof windowSeconds !== 'number') return undefined;
  const point = velocityReadPoint(snapshot.recent, windowSeconds, now);
  return point && { windowSeconds, point };
}

/** `snapshot` with its velocity window read on: the count the rules read follows the window. */
export function snapshotWithWindow(snapshot: PaySnapshot, recent: VelocityWindow): PaySnapshot {
  return { ...snapshot, recent, state: { ...snapshot.state, recentCount: recent.count } };
}

function velocityCapOf(snapshot: PaySnapshot): { window_seconds?: unknown } | undefined {
  return (snapshot.wallet.policy as { velocity_cap?: { window_seconds?: unknown } } | null)?.velocity_cap;
}

const DAY_MS = 86_400_000;

/** The last key made, by UTC day number (the week and month follow from the day): asked twice per payment. */
let lastWindowKey: { day: number; key: string } | undefined;

/** The UTC day, week and month `at` falls in: a remembered snapshot's totals hold only within them. */
export function windowKey(at: Date): string {
  const day = Math.floor(at.getTime() / DAY_MS);
  if (lastWindowKey?.day === day) return lastWindowKey.key;
  const w = policyWindows(at);
  const key = `${isoDate(w.dayStart)}|${isoDate(w.weekStart)}|${isoDate(w.monthStart)}`;
  lastWindowKey = { day, key };
  return key;
}
