/**
 * A seller's money: the ledger its middleware reports to, revenue, payables and the payout history (payouts
 * themselves are made by ../payouts/seller-payouts.ts). Ledger reports are idempotent per seller and tx_hash, attributed by pinned endpoint_id
 * or by route lookup (src/shared/path-pattern.ts, no regex), and stored `pending`: they count toward revenue and
 * payables only once ./ledger-verifier.ts has verified them on chain against the pay-to addresses the seller
 * proved (../seller-pay-to-service.ts) and its collection wallets. A row is stored with the seller's payout mode
 * at report time, a guess only: the verifier makes it the mode of where the chain shows the buyer paid (a
 * collection wallet: platform_mor, owed; a pay-to: direct). Reads and writes through `SellerLedgerStore`
 * (../store/ledger-stores.ts).
 *
 * Defends: revenue and payouts on a seller's word (a row counts once the chain shows it); one seller claiming
 * another's address or transaction (the address must sign, a transfer backs one verified row); a payment
 * collected while the seller was platform_mor and reported after it switched being owed to nobody (the chain,
 * not the mode at report time, decides); reads that grow with history (revenue and payables come from rollups
 * kept by triggers, docs/adr/0008 and 0009).
 * Does not defend: an RPC that lies about a transaction (the configured RPC is trusted, as for balances).
 */
import { Readable } from 'node:stream';
import { getAddress } from 'viem';
import { formatUsd } from '../../../../policy/money.js';
import { generateId } from '../../auth/token-codec.js';
import type { PageRequest } from '../../db/keyset-cursor.js';
import { AppError } from '../../errors/app-error.js';
import type { LedgerVerifier } from './ledger-verifier.js';
import type { EndpointMatcherCache } from './endpoint-matcher-cache.js';
import type { SellerRow } from '../seller-views.js';
import type { LedgerRange, LedgerRow, NewLedgerRow, PayoutRow, SellerLedgerStore } from '../store/ledger-stores.js';
import { ledgerTxKey, type LedgerReportBody } from '../../../shared/ledger-report-schema.js';
import { splitRevenueRange } from './split-revenue-range.js';
import type {
  LedgerEntryView,
  LedgerPage,
  LedgerStatus,
  PayoutFlushView,
  PayoutsPage,
  RevenueSummary,
} from '../../../shared/api-responses/seller-ledger-responses.js';

/** Ledger rows read per query by the CSV export. */
const EXPORT_PAGE_ROWS = 1_000;

/** What the seller's ledger is given (wired once in src/api/app.ts). */
export interface SellerLedgerDeps {
  store: SellerLedgerStore;
  clock: () => Date;
  /** Where reported rows are checked on chain (absent: rows wait as awaiting_verification). */
  ledgerVerifier?: Pick<LedgerVerifier, 'unreachableReason' | 'parkedUntil' | 'nudge'> | undefined;
  /** How a reported route finds its endpoint (./endpoint-matcher-cache.ts). */
  endpoints: Pick<EndpointMatcherCache, 'endpointFor'>;
}

export class SellerLedgerService {
  private readonly store: SellerLedgerStore;
  private readonly clock: () => Date;
  private readonly ledgerVerifier: SellerLedgerDeps['ledgerVerifier'];
  private readonly endpoints: SellerLedgerDeps['endpoints'];

  constructor(deps: SellerLedgerDeps) {
    ({ store: this.store, clock: this.clock, ledgerVerifier: this.ledgerVerifier, endpoints: this.endpoints } = deps);
  }

  /**
   * Accrued payables (verified rows paid to the seller's collection wallet) and a page of its payouts, newest
   * first, each with its state and transaction. In `direct` mode buyers pay the seller's pay_to: nothing accrues
   * but what its collection wallets took (while it was platform_mor, or reported since). `pending_usd` is what the
   * rows reported while platform_mor and still waiting for on-chain verification would add if they paid the
   * collection wallet; `advance_usd` what was paid out before verification existed and no verified row covers yet
   * (migration 20261125200400).
   */
  async payouts(seller: SellerRow, request: PageRequest): Promise<PayoutsPage> {
    const { page, nextCursor } = await this.store.payoutsOf(seller.id, request);
    const payables = await this.store.payablesOf(seller.id);
    // Only platform_mor rows paid to a collection wallet are earned: a direct seller's accrued is what it
    // collected while platform_mor and was not paid yet (usually nothing).
    const accrued = !payables ? 0n : BigInt(payables.earned_micro) - BigInt(payables.paid_micro);
    const pending = await this.store.pendingCollected(seller.id);
    return {
      seller_id: seller.id,
      payout_mode: seller.payout_mode,
      accrued_usd: formatUsd(accrued),
      counts: 'verified' as const,
      pending_usd: formatUsd(BigInt(pending?.total ?? 0)),
      pending_count: Number(pending?.n ?? 0),
      advance_usd: formatUsd(BigInt(payables?.advance_micro ?? 0)),
      flushes: page.map(payoutView),
      next_cursor: nextCursor,
    };
  }

  async report(seller: SellerRow, input: LedgerReportBody): Promise<{ created: boolean; entry: LedgerEntryView }> {
    let endpointId: string | null = null;
    if (input.endpoint_id) {
      if (!(await this.store.hasEndpoint(seller.id, input.endpoint_id))) throw new AppError('endpoint_not_found');
      endpointId = input.endpoint_id;
    } else if (input.route) {
      // The exact path, else the oldest fitting pattern: the seller's endpoints compiled once per change.
      endpointId = await this.endpoints.endpointFor(seller.id, (input.method ?? 'GET').toUpperCase(), input.route);
    }
    // The nonce is kept as claimed: the row is linked to a Treasury authorization only once the verifier saw that
    // authorization's own transfer in the transaction (../store/ledger-row-claim.ts), never on this report's word.
    const nonce = input.nonce ? input.nonce.toLowerCase() : null;
    // Stored pending: it counts once verified on chain (./ledger-verifier.ts). Why it cannot be checked yet, if so.
    // Whatever the seller's mode now, the row may have paid its collection wallet on the network (if it has one)
    // or a pay-to it proved: with neither, it waits for a pay-to.
    const hasRecipient = await this.store.hasRecipient(seller.id, input.network);
    const reason =
      this.ledgerVerifier?.unreachableReason(input.network) ??
      (hasRecipient ? 'awaiting_verification' : 'pay_to_not_registered');
    const now = this.clock();
    const row: NewLedgerRow = {
      id: generateId('led_'),
      seller_id: seller.id,
      endpoint_id: endpointId,
      // A 0x hash lower-case; a Solana signature as given (base58 is case-sensitive).
      tx_hash: ledgerTxKey(input),
      payer: input.payer,
      amount_micro: input.amount,
      network: input.network,
      method: input.method ?? null,
      route: input.route ?? null,
      content_hash: input.content_hash ?? null,
      authorization_id: null,
      decision_id: null,
      nonce,
      // A guess (what pending_usd counts): the verifier writes the mode of the recipient the chain shows.
      payout_mode: seller.payout_mode,
      status: 'pending',
      reason,
      next_check_at:
        reason === 'awaiting_verification' || !this.ledgerVerifier ? now : this.ledgerVerifier.parkedUntil(),
      created_at: now,
    };
    // Idempotent per seller: another seller's report of the same transaction does not block this one — the
    // chain decides whose it is (a transfer to another seller's pay-to is rejected, recipient_mismatch).
    const { created, stored } = await this.store.reportOnce(row);
    if (created) this.ledgerVerifier?.nudge();
    return { created, entry: ledgerView(stored) };
  }

  /** A page of the seller's ledger rows, newest first, of every status (or the one asked for). */
  async ledger(
    seller: SellerRow,
    q: PageRequest & {
      from?: Date | undefined;
      to?: Date | undefined;
      endpoint_id?: string | undefined;
      status?: LedgerStatus | undefined;
    },
  ): Promise<LedgerPage> {
    const range = { from: q.from, to: q.to, endpoint_id: q.endpoint_id, status: q.status };
    const { page, nextCursor } = await this.store.pageOf(seller.id, range, q);
    return { entries: page.map(ledgerView), next_cursor: nextCursor };
  }

  /**
   * Totals by endpoint within `from`/`to`, of verified rows only: whole UTC days from seller_revenue_days (kept
   * by a trigger with each row's verification), the part of a day at either edge from the rows
   * (./split-revenue-range.ts), so its cost follows the days in the range, not the rows. `pending` and
   * `rejected` say what is not counted, split the same way (seller_unverified_days between the edges, the unverified
   * rows' partial index at them): a seller's rejected history does not make the summary slower.
   */
  async revenue(
    seller: SellerRow,
    q: { from?: Date | undefined; to?: Date | undefined; endpoint_id?: string | undefined },
  ): Promise<RevenueSummary> {
    const split = splitRevenueRange(q.from, q.to);
    const byEndpoint = new Map<string, { total: bigint; count: number }>();
    const add = (key: string, total: string, count: string) => {
      const entry = byEndpoint.get(key) ?? { total: 0n, count: 0 };
      byEndpoint.set(key, { total: entry.total + BigInt(total), count: entry.count + Number(count) });
    };
    for (const range of split.rows) {
      for (const r of await this.store.verifiedByEndpoint(seller.id, { ...range, endpoint_id: q.endpoint_id }))
        add(r.key, r.total, r.n);
    }
    if (split.days)
      for (const r of await this.store.revenueDays(seller.id, split.days, q.endpoint_id)) add(r.key, r.total, r.n);
    const endpoints = [...byEndpoint.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // Likewise what is not counted: whole days from seller_unverified_days (kept by a trigger as rows are reported,
    // rejected, reopened or verified), the edges from the unverified rows.
    const byStatus = new Map<string, { total: bigint; count: number }>();
    const addStatus = (r: { key: string; total: string; n: string }) => {
      const entry = byStatus.get(r.key) ?? { total: 0n, count: 0 };
      byStatus.set(r.key, { total: entry.total + BigInt(r.total), count: entry.count + Number(r.n) });
    };
    for (const range of split.rows)
      (await this.store.unverifiedByStatus(seller.id, { ...range, endpoint_id: q.endpoint_id })).forEach(addStatus);
    if (split.days) (await this.store.unverifiedDays(seller.id, split.days, q.endpoint_id)).forEach(addStatus);
    const of = (status: string) => {
      const r = byStatus.get(status);
      return { count: r?.count ?? 0, total_usd: formatUsd(r?.total ?? 0n) };
    };
    return {
      seller_id: seller.id,
      counts: 'verified' as const,
      pending: of('pending'),
      rejected: of('rejected'),
      total_usd: formatUsd(endpoints.reduce((acc, [, e]) => acc + e.total, 0n)),
      count: endpoints.reduce((acc, [, e]) => acc + e.count, 0),
      by_endpoint: endpoints.map(([key, e]) => ({
        endpoint_id: key === '' ? null : key,
        total_usd: formatUsd(e.total),
        count: e.count,
      })),
    };
  }

  /**
   * The seller's ledger as CSV, oldest first, within `from`/`to` and for one endpoint when given: read in
   * keyset pages of 1,000 rows and streamed, so an export of any size holds one page in memory. A database
   * failure part-way ends the stream with an error, and the client sees the response cut short.
   */
  exportCsv(seller: SellerRow, q: LedgerRange = {}): Readable {
    const range = { from: q.from, to: q.to, endpoint_id: q.endpoint_id };
    const rowsAfter = (after: { created_at: Date; id: string } | undefined) =>
      this.store.rowsAfter(seller.id, range, after, EXPORT_PAGE_ROWS);
    const header =
      'created_at,id,tx_hash,payer,amount_usd,network,endpoint_id,method,route,content_hash,authorization_id,decision_id,status,reason';
    const cell = (v: unknown) => {
      const s = v === null || v === undefined ? '' : String(v);
      // Quote everything that could break a row or be read as a formula by a spreadsheet.
      return /[",\n\r]|^[=+\-@\t]/.test(s) ? `"${s.replace(/"/g, '""').replace(/^([=+\-@\t])/, "'$1")}"` : s;
    };
    async function* lines(): AsyncGenerator<string> {
      yield `${header}\n`;
      let after: { created_at: Date; id: string } | undefined;
      for (;;) {
        const rows = await rowsAfter(after);
        if (rows.length > 0) {
          yield rows
            .map((r) => {
              const v = ledgerView(r);
              return (
                [
                  v.created_at,
                  v.id,
                  v.tx_hash,
                  v.payer,
                  v.amount_usd,
                  v.network,
                  v.endpoint_id,
                  v.method,
                  v.route,
                  v.content_hash,
                  v.authorization_id,
                  v.decision_id,
                  v.status,
                  v.reason,
                ]
                  .map(cell)
                  .join(',') + '\n'
              );
            })
            .join('');
        }
        if (rows.length < EXPORT_PAGE_ROWS) return;
        after = rows[rows.length - 1];
      }
    }
    return Readable.from(lines(), { objectMode: false });
  }
}

/** A payout as the payouts page shows it: what it is, where it went and how far it got. */
function payoutView(f: PayoutRow): PayoutFlushView {
  return {
    id: f.id,
    amount_usd: formatUsd(BigInt(f.amount_micro)),
    created_at: f.created_at.toISOString(),
    status: f.status,
    network: f.network,
    pay_to: f.pay_to ? getAddress(f.pay_to.trim()) : null,
    tx_hash: f.tx_hash?.trim() ?? null,
    reason: f.reason,
    settled_at: f.settled_at?.toISOString() ?? null,
  };
}

function ledgerView(r: LedgerRow): LedgerEntryView {
  return {
    id: r.id,
    seller_id: r.seller_id,
    endpoint_id: r.endpoint_id,
    tx_hash: r.tx_hash.trim(),
    payer: r.payer.trim(),
    amount_usd: formatUsd(BigInt(r.amount_micro)),
    amount: String(r.amount_micro),
    network: r.network,
    method: r.method,
    route: r.route,
    content_hash: r.content_hash,
    authorization_id: r.authorization_id,
    decision_id: r.decision_id,
    /** pending until verified on chain; only verified rows count toward revenue and payables. */
    status: r.status,
    /** Why a row is pending or rejected (stable snake_case); null once verified. */
    reason: r.reason ?? null,
    confirmations: r.confirmations ?? null,
    verified_at: r.verified_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  };
}
