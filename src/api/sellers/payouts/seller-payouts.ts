/**
 * Paying a `platform_mor` seller what the platform collected for it (docs/adr/0011-merchant-of-record.md).
 * A flush, serialised per seller, first records payouts and then moves them:
 *   1. record — under the seller's lock: for each collection wallet, a `pending` payout of what is owed,
 *      at most `collected − paid out` of that wallet (CHECK platform_collection_paid_within_collected), the
 *      seller's `earned − paid` (CHECK seller_payables_paid_within_earned, which keeps the advance of 0009) and
 *      `maxPayoutMicro`. Both totals count pending payouts, so a flush arriving meanwhile owes nothing more; a
 *      flush repeating an Idempotency-Key records nothing.
 *   2. move — every unfinished payout of the seller, oldest first: signed by its collection wallet to the
 *      seller's oldest proven pay-to address (./payout-rail.ts), then, under the seller's lock again, marked
 *      `submitted` and settled through the facilitator (`settled` with the transaction). A payout already
 *      `submitted` is first looked for on chain (the answer of an earlier attempt may have been lost): spent →
 *      `settled`; unspent and expired — this host's clock, read before the chain is, past `validBefore` plus a
 *      grace (./payout-expiry.ts) → `failed`, its amount given back by a trigger; otherwise submitted again
 *      (the same signed authorization).
 * What cannot move yet stays `pending` or `submitted` with a reason, for the next flush. A `direct` seller is
 * owed nothing it earned in that mode; what its collection wallets took while it was `platform_mor` is still
 * paid out (`payouts_not_applicable` once there is none).
 *
 * The move's lock: the seller's payout lock held for the session on one pooled connection, with no transaction
 * open (`PayoutStore.underMoveLock`), from the payouts read again under it to the facilitator's last answer.
 * So one flush never judges a payout expired while another one's resubmission of it is in flight. Signing goes
 * through the pay path, which takes pooled connections of its own: it happens before the lock, so the lock's
 * holder never asks the pool for another connection, and at most `MOVES_AT_ONCE` moves per process hold one
 * across a facilitator's answer (its timeout bounds each). The lock is tried, never waited for, in both phases: a
 * flush finding it held by another flush of the seller answers 409 `payout_in_progress` at once (Retry-After), so
 * flushes sent at once never hold pooled connections waiting for one settlement (the pool every tenant's requests
 * use). Refused at the move, what it recorded stays `pending` for the retry, which moves it.
 *
 * Defends: paying twice (one authorization per payout; the chain read before anything is given back, only once
 * the authorization cannot move money any more; one flush at a time moving a seller's payouts); paying more
 * than reached the platform (two CHECKs); paying a seller from another seller's collection; one seller's
 * flushes filling the connection pool behind its payout lock (refused instead of queued).
 * Does not defend: a lying facilitator or RPC; a chain or RPC endpoint further from this host's clock than the
 * grace (./payout-expiry.ts); a seller's pay-to key being lost (its proof is its signature).
 * Reads and writes through `PayoutStore` (../store/payout-stores.ts).
 */
import { getAddress, type Hex } from 'viem';
import type { ChainInfo, ChainRegistry } from '../../../shared/chain-registry.js';
import { generateId } from '../../auth/token-codec.js';
import type { AuthorizationUseReader } from '../../chain/find-authorization-use.js';
import { NestedAcquireLimit } from '../../db/nested-acquire-limit.js';
import { AppError } from '../../errors/app-error.js';
import { paymentTerms, type PaymentAuthorization } from '../../pay/payment-authorization.js';
import { isPayoutExpired } from './payout-expiry.js';
import type { PayoutOrder, PayoutRail } from './payout-rail.js';
import type { SellerRow } from '../seller-views.js';
import type { PayoutMoves, PayoutProgress, PayoutStore, UnfinishedPayout } from '../store/payout-stores.js';

type PayoutRow = UnfinishedPayout;

/**
 * Moves at once in this process: each holds one pooled connection (its lock) while a facilitator or the chain
 * answers, so a slow facilitator holds at most this many of the pool's connections; the rest wait holding none.
 */
export const MOVES_AT_ONCE = 4;

export interface SellerPayoutOptions {
  /** The largest single payout (raw units); what is owed beyond it waits for the next flush. */
  maxPayoutMicro: bigint;
}

const clip = (s: string) => s.slice(0, 64);

/** What the payouts are built from (wired once in src/api/app.ts). */
export interface SellerPayoutsDeps {
  store: PayoutStore;
  clock: () => Date;
  chains: ChainRegistry;
  /** Absent: no facilitator configured; payouts are recorded and wait (`payout_rail_not_configured`). */
  rail: Pick<PayoutRail, 'sign' | 'settle'> | undefined;
  /** Whether a submitted payout's authorization was spent on chain (absent: it is submitted again). */
  chainUse: Pick<AuthorizationUseReader, 'find'> | undefined;
  options: SellerPayoutOptions;
}

/** A payout signed before the lock, ready to move under it; or what stops it (written under it as its reason). */
type PreparedPayout =
  | {
      kind: 'signed';
      rail: Pick<PayoutRail, 'settle'>;
      chain: ChainInfo;
      order: PayoutOrder;
      payment: PaymentAuthorization;
    }
  | { kind: 'stopped'; reason: string };

export class SellerPayouts {
  private readonly store: PayoutStore;
  private readonly clock: () => Date;
  private readonly chains: ChainRegistry;
  private readonly rail: SellerPayoutsDeps['rail'];
  private readonly chainUse: SellerPayoutsDeps['chainUse'];
  private readonly options: SellerPayoutOptions;
  private readonly moving = new NestedAcquireLimit(MOVES_AT_ONCE);

  constructor(deps: SellerPayoutsDeps) {
    ({
      store: this.store,
      clock: this.clock,
      chains: this.chains,
      rail: this.rail,
      chainUse: this.chainUse,
      options: this.options,
    } = deps);
  }

  /** Records what is owed and moves every unfinished payout of the seller (see the header). */
  async flush(seller: SellerRow, actor: string, idempotencyKey: string | undefined): Promise<void> {
    // A direct seller is owed only what its collection wallets took while it was platform_mor.
    if (seller.payout_mode === 'direct' && !(await this.store.owesAny(seller.id)))
      throw new AppError('payouts_not_applicable');
    await this.record(seller, actor, idempotencyKey);
    // A payout that expired unspent gave its amount back: owed again, recorded and moved anew.
    if (await this.moveUnfinished(seller)) {
      await this.record(seller, actor, undefined);
      await this.moveUnfinished(seller);
    }
  }

  /** Moves every unfinished payout of the seller, oldest first, under its lock; true when one of them failed. */
  private async moveUnfinished(seller: SellerRow): Promise<boolean> {
    // Signed before the lock: the pay path takes pooled connections of its own (see the header).
    const prepared = new Map<string, PreparedPayout>();
    for (const payout of await this.store.unfinishedOf(seller.id))
      prepared.set(payout.id, await this.prepare(seller, payout));
    if (prepared.size === 0) return false;
    return this.moving.run(() =>
      this.store.underMoveLock(seller.id, async (moves) => {
        let failed = false;
        // Read again under the lock: another flush may have moved them since.
        for (const payout of await moves.unfinished()) {
          const ready = prepared.get(payout.id);
          // Recorded after this flush read them: the flush that recorded it moves it.
          if (!ready) continue;
          await this.move(moves, payout, ready);
          failed ||= payout.status === 'failed';
        }
        return failed;
      }),
    );
  }

  private async record(seller: SellerRow, actor: string, idempotencyKey: string | undefined): Promise<void> {
    await this.store.underPayoutLock(seller.id, async (ledger) => {
      if (idempotencyKey && (await ledger.recorded(idempotencyKey))) return;
      // Locked: a ledger row verified meanwhile waits, and is paid by the next flush. The collection wallets first,
      // then the payables: the order a verify's triggers lock them in (the store takes both at the first read).
      const wallets = await ledger.collections();
      const payables = await ledger.payables();
      let owed = payables ? BigInt(payables.earned_micro) - BigInt(payables.paid_micro) : 0n;
      let key = idempotencyKey ?? null;
      for (const w of wallets) {
        const collected = BigInt(w.collected_micro) - BigInt(w.paid_micro);
        const amount = [owed, collected, this.options.maxPayoutMicro].reduce((a, b) => (b < a ? b : a));
        if (amount <= 0n) continue;
        const now = this.clock();
        await ledger.add({
          id: generateId('po_'),
          seller_id: seller.id,
          amount_micro: amount.toString(),
          created_by: actor,
          created_at: now,
          updated_at: now,
          status: 'pending',
          network: w.network,
          wallet_id: w.wallet_id,
          idempotency_key: key,
        });
        key = null;
        owed -= amount;
      }
    });
  }

  /** Signs a payout (the same authorization every time), or says what stops it. */
  private async prepare(seller: SellerRow, payout: PayoutRow): Promise<PreparedPayout> {
    const chain = this.chains.resolve(payout.network);
    const rail = this.rail;
    if (!rail || !chain) return { kind: 'stopped', reason: 'payout_rail_not_configured' };
    const payTo = payout.pay_to?.trim() ?? (await this.store.oldestPayTo(seller.id));
    if (!payTo) return { kind: 'stopped', reason: 'pay_to_not_registered' };
    const order: PayoutOrder = {
      id: payout.id,
      account_id: payout.account_id,
      wallet_id: payout.wallet_id,
      pay_to: getAddress(payTo.toLowerCase()),
      amount_micro: BigInt(payout.amount_micro),
    };
    try {
      return { kind: 'signed', rail, chain, order, payment: await rail.sign(chain, order) };
    } catch (err) {
      if (err instanceof AppError) return { kind: 'stopped', reason: err.code };
      throw err;
    }
  }

  /** Moves one payout as far as it can go now, under the seller's lock; what stops it is written as its reason. */
  private async move(moves: PayoutMoves, payout: PayoutRow, prepared: PreparedPayout): Promise<void> {
    if (prepared.kind === 'stopped') return this.note(moves, payout, prepared.reason);
    const { rail, chain, order, payment } = prepared;
    if (payout.status === 'submitted') {
      const done = await this.fromChain(moves, chain, payout, payment);
      if (done) return;
    } else {
      await this.update(moves, payout, {
        status: 'submitted',
        pay_to: order.pay_to.toLowerCase(),
        authorization_id: payment.authorization_id,
        reason: null,
      });
    }
    const outcome = await rail.settle(chain, order, payment);
    if (outcome.kind === 'ok' && /^0x[0-9a-fA-F]{64}$/.test(outcome.settlement.transaction))
      return this.settled(moves, payout, outcome.settlement.transaction);
    const reason =
      outcome.kind === 'unavailable'
        ? 'facilitator_unavailable'
        : outcome.kind === 'rejected'
          ? outcome.reason
          : 'settlement_without_transaction';
    await this.note(moves, payout, reason);
  }

  /**
   * A submitted payout whose earlier answer may have been lost: the chain says whether it moved. True when it
   * is finished (settled, or failed because it expired unspent).
   */
  private async fromChain(
    moves: PayoutMoves,
    chain: ChainInfo,
    payout: PayoutRow,
    payment: PaymentAuthorization,
  ): Promise<boolean> {
    if (!this.chainUse) return false;
    const terms = paymentTerms(payment);
    // Read before the chain is: an "unused" below then describes the chain after this instant.
    const now = this.clock();
    let use;
    try {
      use = await this.chainUse.find(chain, terms.from as Hex, terms.nonce as Hex);
    } catch (err) {
      if (err instanceof AppError) return (await this.note(moves, payout, err.code), true);
      throw err;
    }
    if (use.kind === 'used') {
      if (use.txHash) await this.settled(moves, payout, use.txHash);
      else await this.note(moves, payout, 'settled_transaction_unknown');
      return true;
    }
    // Unused, and past validBefore plus the grace: no block can spend it any more (./payout-expiry.ts).
    if (isPayoutExpired(terms.validBefore, now)) {
      await this.update(moves, payout, { status: 'failed', reason: 'authorization_expired' });
      return true;
    }
    return false;
  }

  private settled(moves: PayoutMoves, payout: PayoutRow, txHash: string): Promise<void> {
    const at = this.clock();
    return this.update(moves, payout, {
      status: 'settled',
      tx_hash: txHash.toLowerCase(),
      settled_at: at,
      reason: null,
    });
  }

  private note(moves: PayoutMoves, payout: PayoutRow, reason: string): Promise<void> {
    return this.update(moves, payout, { reason: clip(reason) });
  }

  private async update(
    moves: PayoutMoves,
    payout: PayoutRow,
    changes: Omit<PayoutProgress, 'updated_at'>,
  ): Promise<void> {
    await moves.progress(payout.id, { ...changes, updated_at: this.clock() });
    if (changes.status) payout.status = changes.status;
  }
}
