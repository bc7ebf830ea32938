/**
 * Recording a payout and verifying a ledger row lock the same two rows of a platform_mor seller — its collection
 * wallet (platform_collection_wallets) and its payables (seller_payables) — and must take them in one order, or
 * the two wait for each other and PostgreSQL aborts one (40P01, deadlock_detected). Verifying takes them in the
 * order its triggers fire (by name: `ledger_entries_collected_verified`, then `ledger_entries_payables_verified`,
 * migrations 20261128120000 and 20261125200400): the wallet, then the payables.
 *
 * Defends: a verify of seller S's platform_mor row during a payout flush of S failing one of them with 40P01. The
 * interleaving is forced, not hoped for: the flush (SellerPayouts over PgPayoutStore, real code) is paused right
 * after its first FOR UPDATE read, the verify (PgLedgerVerificationStore.verify) is started and seen waiting on a
 * lock in pg_stat_activity, and only then is the flush let go. With the payables locked first (the old order) the
 * verify holds the wallet and waits for the payables, the flush then waits for the wallet: a deadlock, every time.
 * The other interleaving (the verify's transaction holds both rows first, the flush waits) is checked too: the
 * flush pays what was verified before it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { createKnex, type Knex } from '../../../src/api/db/knex-client.js';
import { SellerPayouts } from '../../../src/api/sellers/payouts/seller-payouts.js';
import type { SellerRow } from '../../../src/api/sellers/seller-views.js';
import { PgPayoutStore } from '../../../src/api/sellers/store/pg-payout-stores.js';
import { PgLedgerVerificationStore } from '../../../src/api/sellers/store/pg-ledger-verification-store.js';
import type { PayoutLedger, PayoutStore } from '../../../src/api/sellers/store/payout-stores.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

const NETWORK = 'eip155:84532';
const PAYER = '0x1111111111111111111111111111111111111111';
const VERIFY_APP = 'lock-order-verify';
const FLUSH_APP = 'lock-order-flush';

/** A gate the flush stops at once, after its first locking read; `paused` resolves when it is there. */
function gate() {
  let arrive!: () => void;
  let release!: () => void;
  const paused = new Promise<void>((r) => (arrive = r));
  const released = new Promise<void>((r) => (release = r));
  let used = false;
  const wait = async () => {
    if (used) return;
    used = true;
    arrive();
    await released;
  };
  return { paused, release, wait };
}

/** The real store; its payout ledger stops at `wait` after the first of its two FOR UPDATE reads returns. */
function pausingStore(inner: PgPayoutStore, wait: () => Promise<void>): PayoutStore {
  const pausing = (ledger: PayoutLedger): PayoutLedger => ({
    ...ledger,
    payables: async () => {
      const read = await ledger.payables();
      await wait();
      return read;
    },
    collections: async () => {
      const read = await ledger.collections();
      await wait();
      return read;
    },
  });
  return {
    owesAny: (id) => inner.owesAny(id),
    underPayoutLock: (id, work) => inner.underPayoutLock(id, (ledger) => work(pausing(ledger))),
    underMoveLock: (id, work) => inner.underMoveLock(id, work),
    unfinishedOf: (id) => inner.unfinishedOf(id),
    oldestPayTo: (id) => inner.oldestPayTo(id),
  };
}

describe('payout flush and ledger verify take the seller rows in one order (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  /** Separate pools, named, so pg_stat_activity tells the verify's backend from the flush's. */
  let verifyKnex: Knex;
  let flushKnex: Knex;
  let n = 0;

  before(async () => {
    db = await createTestDatabase();
    verifyKnex = createKnex(db.connectionString, 2, VERIFY_APP);
    flushKnex = createKnex(db.connectionString, 4, FLUSH_APP);
  });
  after(async () => {
    await verifyKnex?.destroy();
    await flushKnex?.destroy();
    await db?.drop();
  });

  /** A platform_mor seller with a collection wallet on NETWORK. */
  const seller = async (): Promise<SellerRow> => {
    const id = `sel_${randomBytes(12).toString('hex')}`;
    const now = new Date();
    const address = `0x${randomBytes(20).toString('hex')}`;
    await db.knex('accounts').insert({ id: `acct_${id}`, created_at: now });
    await db.knex('sellers').insert({
      id,
      account_id: `acct_${id}`,
      name: id,
      slug: id.slice(0, 30),
      payout_mode: 'platform_mor',
      created_at: now,
      updated_at: now,
    });
    await db.knex('treasury_accounts').insert({
      id: `acct_t_${id}`,
      owner_type: 'platform',
      owner_id: id,
      account_key_ref: 'test',
      created_at: now,
    });
    await db.knex('wallets').insert({
      id: `wal_${id}`,
      account_id: `acct_t_${id}`,
      network: NETWORK,
      address,
      public_key: '0x',
      wallet_key_ref: 'test',
      key_version: 1,
      policy: '{}',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    await db
      .knex('platform_collection_wallets')
      .insert({ seller_id: id, network: NETWORK, wallet_id: `wal_${id}`, address, created_at: now });
    return (await db.knex('sellers').where({ id }).first()) as SellerRow;
  };
  /** A pending platform_mor row of the seller, paying `amount`. */
  const pendingRow = async (sellerId: string, amount: number): Promise<string> => {
    const id = `led_${(++n).toString(16).padStart(24, '0')}`;
    await db.knex('ledger_entries').insert({
      id,
      seller_id: sellerId,
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      payer: PAYER,
      amount_micro: String(amount),
      network: NETWORK,
      payout_mode: 'platform_mor',
      reason: 'awaiting_verification',
      created_at: new Date(),
    });
    return id;
  };
  const verify = (store: PgLedgerVerificationStore, rowId: string) =>
    store.verify(
      rowId,
      { checked_at: new Date(), attempts: 1, confirmations: 1 },
      0,
      new Date(),
      undefined,
      'platform_mor',
    );
  const payouts = (store: PayoutStore) =>
    new SellerPayouts({
      store,
      clock: () => new Date(),
      chains: ChainRegistry.fromConfig(undefined),
      rail: undefined,
      chainUse: undefined,
      options: { maxPayoutMicro: 10n ** 12n },
    });
  /** Waits until a backend of `app` waits on a heavyweight lock (a row's holder), or `done` settles first. */
  const waitingOnLock = async (app: string, done: Promise<unknown>) => {
    let settled = false;
    void done.then(
      () => (settled = true),
      () => (settled = true),
    );
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const { rows } = await db.knex.raw<{ rows: unknown[] }>(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = ? AND wait_event_type = 'Lock'`,
        [app],
      );
      if (rows.length > 0) return;
      if (settled) assert.fail(`${app} finished without waiting on a lock`);
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`${app} never waited on a lock`);
  };
  const totals = async (sellerId: string) => {
    const wallet = await db.knex('platform_collection_wallets').where({ seller_id: sellerId }).first();
    const payables = await db.knex('seller_payables').where({ seller_id: sellerId }).first();
    const recorded = (await db.knex('payout_flushes').where({ seller_id: sellerId }).orderBy('created_at')).map(
      (p: { amount_micro: string }) => String(p.amount_micro),
    );
    return {
      collected: String(wallet.collected_micro),
      walletPaid: String(wallet.paid_micro),
      earned: String(payables.earned_micro),
      paid: String(payables.paid_micro),
      recorded,
    };
  };
  const outcome = (r: PromiseSettledResult<unknown>) =>
    r.status === 'fulfilled' ? 'ok' : `${(r.reason as { code?: string }).code ?? ''} ${String(r.reason)}`;

  it('a row verified while a flush holds its first lock waits for the flush; neither fails (no 40P01)', async () => {
    const s = await seller();
    await verify(new PgLedgerVerificationStore(db.knex), await pendingRow(s.id, 1000));
    const late = await pendingRow(s.id, 500);

    const g = gate();
    const flushing = payouts(pausingStore(new PgPayoutStore(flushKnex), g.wait)).flush(s, 'test', undefined);
    await Promise.race([g.paused, flushing]);
    const verifying = verify(new PgLedgerVerificationStore(verifyKnex), late);
    await waitingOnLock(VERIFY_APP, verifying);
    g.release();
    const [flushed, verified] = await Promise.allSettled([flushing, verifying]);

    assert.deepEqual([outcome(flushed), outcome(verified)], ['ok', 'ok'], 'both the flush and the verify succeed');
    assert.equal(verified.status === 'fulfilled' && verified.value, true);
    // The flush paid what was verified before it; the late row is counted, and owed to the next flush.
    assert.deepEqual(await totals(s.id), {
      collected: '1500',
      walletPaid: '1000',
      earned: '1500',
      paid: '1000',
      recorded: ['1000'],
    });
  });

  it('a flush arriving while a verify holds both rows waits for it, then pays the verified row too', async () => {
    const s = await seller();
    await verify(new PgLedgerVerificationStore(db.knex), await pendingRow(s.id, 1000));
    const late = await pendingRow(s.id, 500);

    let flushing: Promise<void> | undefined;
    await verifyKnex.transaction(async (trx) => {
      assert.equal(await verify(new PgLedgerVerificationStore(trx), late), true);
      flushing = payouts(new PgPayoutStore(flushKnex)).flush(s, 'test', undefined);
      await waitingOnLock(FLUSH_APP, flushing);
    });
    await flushing;
    assert.deepEqual(await totals(s.id), {
      collected: '1500',
      walletPaid: '1500',
      earned: '1500',
      paid: '1500',
      recorded: ['1500'],
    });
  });
});
