/**
 * Reserving the payment of a buyer PAT with a daily cap (spanning wallets) whose total this process does not
 * know, or knows without room for this payment — or of a PAT whose cap an earlier attempt's statement met
 * although its bearer was cached without one: one transaction under the wallet's exclusive lock and then
 * the PAT's lock (always in that order, so two wallets paid through one PAT cannot deadlock), whose opening
 * round trip reads the wallet's snapshot, takes the PAT's lock and reads the PAT's cap and its total that UTC
 * day. Over the cap: 429 MGMT_6014 with the raise_pat_cap recovery, nothing recorded. The decision is written
 * in the same transaction (its PAT total too), and the total is remembered, with the cap it was read with,
 * for the PAT's next payments (../snapshot-cache.ts); what it remembered of the wallet is forgotten, as the
 * write moved the wallet's chain head. A COMMIT whose connection dropped may have committed: the error is
 * marked (./uncertain-reservation.ts).
 *
 * Defends: a cap lowered or set through another process while this one holds the PAT's bearer in its cache
 * with the old cap — the cap decided on is api_tokens' under the PAT's lock, never the bearer's. A cap
 * changed between that read and the write is met by the write's statement (CHECK
 * pat_spend_totals_within_cap; ./store/decision-write.ts): the payment is taken again, here.
 */
import { formatUsd } from '../../../policy/money.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import { AppError } from '../errors/app-error.js';
import type { OpeningQuery } from '../db/wallet-transaction.js';
import type { PayDeps } from './pay-deps.js';
import { snapshotFromRows } from './pay-snapshot.js';
import type { CappedPat, DecisionOutcome } from './pay-types.js';
import type { PatTotal } from './snapshot-cache.js';
import { nonceUsedError, type PaymentAttempt } from './payment-attempt.js';
import { isoDate } from './store/pay-statements.js';
import { snapshotQuery } from './store/pg-pay-stores.js';
import { markUncertain } from './uncertain-reservation.js';

/** `tokenId`: the buyer PAT the payment spends as (CallContext.pat), whose cap and total are read here. */
export async function reserveUnderPatLock(
  deps: PayDeps,
  attempt: PaymentAttempt,
  tokenId: string,
): Promise<DecisionOutcome> {
  const { ctx, plan } = attempt;
  deps.metrics.patCapChecks.inc({ source: 'read' });
  let lockedOutcome: DecisionOutcome | undefined;
  let total: PatTotal | undefined;
  const opening = (): OpeningQuery => {
    attempt.now = deps.clock();
    const query = snapshotQuery(ctx.walletId, attempt.now, ctx.idempotencyKey);
    return { ...query, then: patCapQueries(tokenId, policyWindows(attempt.now).dayStart) };
  };
  const outcome = await deps.writes
    .decideUnderLock(ctx.walletId, opening, (rows, [, patRows]) => {
      // 404 / 410 come before the PAT's cap; a resumed Idempotency-Key counts nothing new.
      const snapshot = attempt.checked(snapshotFromRows(rows));
      const { capMicro, spent } = patCapRow(patRows?.[0]);
      if (!snapshot.previous && capMicro !== null)
        checkPatDailyCap(deps, { tokenId, dailyCapMicro: capMicro }, spent, plan.amountMicro);
      const decided = attempt.decide(snapshot);
      lockedOutcome = decided.outcome;
      // Its write moves the wallet's chain head and totals past what this process remembered of the wallet: forgotten
      // while the wallet's turn is held, so its next payment reads them (a stale memory would fail that payment's
      // shared statement, and the failure would forget the PAT's total, sending its other wallets here in turn).
      if (decided.write) deps.memory.forgetSnapshot(ctx.walletId);
      // The write counts the payment in the PAT's daily total too (DecisionWrite.patSpend).
      const counted = decided.outcome.kind === 'reserved' && decided.outcome.fresh ? plan.amountMicro : 0n;
      total = { day: isoDate(policyWindows(attempt.now).dayStart), spentMicro: spent + counted, capMicro };
      return { result: decided, write: decided.write };
    })
    .catch((err: unknown) => {
      // A COMMIT whose connection dropped may have committed.
      throw markUncertain(nonceUsedError(err, lockedOutcome), lockedOutcome);
    });
  if (total) deps.memory.rememberPatTotal(tokenId, total, deps.writes.generation);
  return outcome.outcome;
}

/**
 * The statements that follow the wallet lock and snapshot in the opening round trip: the per-PAT lock, then
 * the PAT's daily cap as committed and its total that UTC day, read under it (two primary-key lookups, one
 * statement). One round trip instead of three while the PAT's lock — which every payment of that agent
 * waits for — is held.
 */
function patCapQueries(tokenId: string, dayStart: Date): OpeningQuery['then'] {
  return [
    { sql: 'SELECT pg_advisory_xact_lock(hashtextextended(?, 13))', params: [`pat:${tokenId}`] },
    {
      sql: `SELECT t.daily_cap_micro, s.spent_micro FROM api_tokens t
              LEFT JOIN pat_spend_totals s ON s.token_id = t.id AND s.day = ?::date
             WHERE t.id = ?`,
      params: [isoDate(dayStart), tokenId],
    },
  ];
}

/** The PAT's cap (null: none) and its total that day (0 before its first payment) from patCapQueries' row. */
function patCapRow(row: Record<string, unknown> | undefined): { capMicro: bigint | null; spent: bigint } {
  const cap = row?.daily_cap_micro as string | null | undefined;
  return {
    capMicro: cap === null || cap === undefined ? null : BigInt(cap),
    spent: BigInt((row?.spent_micro as string | null | undefined) ?? 0),
  };
}

/**
 * The buyer PAT's daily cap (UTC day), as read under its lock, against its total read with it. Over the cap:
 * 429 MGMT_6014 with the raise_pat_cap recovery; nothing is recorded. The recovery names human paths only —
 * the dashboard page and the CLI command that signs the owner in again with the seed — as the agent's own
 * PAT (or a session exchanged from it) cannot change a cap.
 */
function checkPatDailyCap(deps: PayDeps, pat: CappedPat, spent: bigint, amountMicro: bigint): void {
  if (spent + amountMicro <= pat.dailyCapMicro) return;
  deps.metrics.payDecisions.inc({ kind: 'pay', outcome: 'pat_cap' });
  throw new AppError('MGMT_6014', {
    recovery: {
      kind: 'raise_pat_cap',
      settings_url: `${deps.dashboardUrl}/settings/pats/${pat.tokenId}`,
      cli_command: `xx pat update ${pat.tokenId} --daily-cap <usd>`,
      current_cap_usd: formatUsd(pat.dailyCapMicro),
      attempted_amount_usd: formatUsd(amountMicro),
    },
    fields: { spent_today_usd: formatUsd(spent) },
  });
}
