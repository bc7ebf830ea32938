/**
 * Paying a `platform_mor` seller what the platform collected for it (docs/adr/0011-merchant-of-record.md).
 * A flush, serialised per seller, first records payouts and then moves them:
 *   1. record — under the seller's lock: for each collection wallet, a `pending` payout of what is owed,
 *      at most `collected − paid out` of that wallet (CHECK platform_collection_paid_within_collected), the
 *      seller's `earned − paid` (CHECK seller_payables_paid_within_earned, which keeps the advance of 0009) and
 *      `maxPayoutMicro`. Both totals count pending payouts, so a flush arriving meanwhile owes nothing more; a
 *      flush repeating an Idempotency-Key records nothing.
 *   2. move — every unfinished payout of the seller, oldest first: signed by its collection wallet to the
 *      seller's oldest proven pay-to address (`submitted`, ./payout-rail.ts), settled through the facilitator
 *      (`settled` with the transaction). A payout already `submitted` is first looked for on chain (the answer
 *      of an earlier attempt may have been lost): spent → `settled`; unspent and expired → `failed`, its
 *      amount given back by a trigger; otherwise submitted again (the same signed authorization).
 * What cannot move yet stays `pending` or `submitted` with a reason, for the next flush. A `direct` seller is
 * owed nothing it earned in that mode; what its collection wallets took while it was `platform_mor` is still
 * paid out (`payouts_not_applicable` once there is none).
 *
 * Defends: paying twice (one authorization per payout, the chain read before anything is given back); paying
 * more than reached the platform (two CHECKs); paying a seller from another seller's collection.
 * Does not defend: a lying facilitator or RPC; a seller's pay-to key being lost (its proof is its signature).
 * Reads and writes through `PayoutStore` (../store/payout-stores.ts).
 */
import { getAddress, type Hex } from 'viem';
import type { ChainRegistry } from '../../../shared/chain-registry.js';
import { generateId } from '../../auth/token-codec.js';
import type { AuthorizationUseReader } from '../../chain/find-authorization-use.js';
import { AppError } from '../../errors/app-error.js';
import { paymentTerms, type PaymentAuthorization } from '../../pay/payment-authorization.js';
import type { PayoutOrder, PayoutRail } from './payout-rail.js';
import type { SellerRow } from '../seller-views.js';
import type { PayoutProgress, PayoutStore, UnfinishedPayout } from '../store/payout-stores.js';

type PayoutRow = UnfinishedPayout;

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
  rail: PayoutRail | undefined;
  /** Whether a submitted payout's authorization was spent on chain (absent: it is submitted again). */
  chainUse: Pick<AuthorizationUseReader, 'find'> | undefined;
  options: SellerPayoutOptions;
}

export class SellerPayouts {
  private readonly store: PayoutStore;
  private readonly clock: () => Date;
  private readonly chains: ChainRegistry;
  private readonly rail: PayoutRail | undefined;
  private readonly chainUse: SellerPayoutsDeps['chainUse'];
  private readonly options: SellerPayoutOptions;

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

  /** Moves every unfinished payout of the seller, oldest first; true when one of them failed. */
  private async moveUnfinished(seller: SellerRow): Promise<boolean> {
    const unfinished = await this.store.unfinishedOf(seller.id);
    let failed = false;
    for (const payout of unfinished) {
      await this.move(seller, payout);
      failed ||= payout.status === 'failed';
    }
    return failed;
  }

  private async record(seller: SellerRow, actor: string, idempotencyKey: string | undefined): Promise<void> {
    await this.store.underPayoutLock(seller.id, async (ledger) => {
      if (idempotencyKey && (await ledger.recorded(idempotencyKey))) return;
      // Locked: a ledger row verified meanwhile waits, and is paid by the next flush.
      const payables = await ledger.payables();
      let owed = payables ? BigInt(payables.earned_micro) - BigInt(payables.paid_micro) : 0n;
      const wallets = await ledger.collections();
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

  /** Moves one payout as far as it can go now; what stops it is written as its reason. */
  private async move(seller: SellerRow, payout: PayoutRow): Promise<void> {
    const chain = this.chains.resolve(payout.network);
    if (!this.rail || !chain) return this.note(payout, 'payout_rail_not_configured');
    const payTo = payout.pay_to?.trim() ?? (await this.store.oldestPayTo(seller.id));
    if (!payTo) return this.note(payout, 'pay_to_not_registered');
    const order: PayoutOrder = {
      id: payout.id,
      account_id: payout.account_id,
      wallet_id: payout.wallet_id,
      pay_to: getAddress(payTo.toLowerCase()),
      amount_micro: BigInt(payout.amount_micro),
    };
    let payment: PaymentAuthorization;
    try {
      payment = await this.rail.sign(chain, order);
    } catch (err) {
      if (err instanceof AppError) return this.note(payout, err.code);
      throw err;
    }
    if (payout.status === 'submitted') {
      const done = await this.fromChain(chain, payout, payment);
      if (done) return;
    } else {
      await this.update(payout, {
        status: 'submitted',
        pay_to: order.pay_to.toLowerCase(),
        authorization_id: payment.authorization_id,
        reason: null,
      });
    }
    const outcome = await this.rail.settle(chain, order, payment);
    if (outcome.kind === 'ok' && /^0x[0-9a-fA-F]{64}$/.test(outcome.settlement.transaction))
      return this.settled(payout, outcome.settlement.transaction);
    const reason =
      outcome.kind === 'unavailable'
        ? 'facilitator_unavailable'
        : outcome.kind === 'rejected'
          ? outcome.reason
          : 'settlement_without_transaction';
    await this.note(payout, reason);
  }

  /**
   * A submitted payout whose earlier answer may have been lost: the chain says whether it moved. True when it
   * is finished (settled, or failed because it expired unspent).
   */
  private async fromChain(
    chain: NonNullable<ReturnType<ChainRegistry['resolve']>>,
    payout: PayoutRow,
    payment: PaymentAuthorization,
  ): Promise<boolean> {
    if (!this.chainUse) return false;
    const terms = paymentTerms(payment);
    let use;
    try {
      use = await this.chainUse.find(chain, terms.from as Hex, terms.nonce as Hex);
    } catch (err) {
      if (err instanceof AppError) return (await this.note(payout, err.code), true);
      throw err;
    }
    if (use.kind === 'used') {
      if (use.txHash) await this.settled(payout, use.txHash);
      else await this.note(payout, 'settled_transaction_unknown');
      return true;
    }
    if (Number(terms.validBefore) * 1000 <= this.clock().getTime()) {
      await this.update(payout, { status: 'failed', reason: 'authorization_expired' });
      return true;
    }
    return false;
  }

  private settled(payout: PayoutRow, txHash: string): Promise<void> {
    const at = this.clock();
    return this.update(payout, { status: 'settled', tx_hash: txHash.toLowerCase(), settled_at: at, reason: null });
  }

  private note(payout: PayoutRow, reason: string): Promise<void> {
    return this.update(payout, { reason: clip(reason) });
  }

  private async update(payout: PayoutRow, changes: Omit<PayoutProgress, 'updated_at'>): Promise<void> {
    await this.store.progress(payout.id, { ...changes, updated_at: this.clock() });
    if (changes.status) payout.status = changes.status;
  }
}
