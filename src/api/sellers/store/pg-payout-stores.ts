/**
 * The PostgreSQL implementations of the payouts' stores (./payout-stores.ts): `PgPayoutStore` and the collection
 * wallets (`PgCollectionWalletStore`, each created once per seller and network under an advisory lock, a unique
 * index as the second line). A payout is recorded under a per-seller advisory lock with the seller's collection
 * wallets and then its payables read FOR UPDATE (the order the ledger's triggers take them in: see
 * `payoutLedger`), so a ledger row verified meanwhile waits and is paid by the next flush; a payout's progress is
 * written only while it is `pending` or `submitted`, and only under the same lock, taken for the session on one
 * pooled connection (`underMoveLock`): no transaction stays open while a facilitator or the chain answers, and the
 * lock is released before the connection goes back to the pool (or the connection is dropped, and the lock with it).
 * The lock is only ever tried, never waited for: held by another flush of the seller (one settlement can hold it
 * for the facilitator's timeout, 30 s), the flush answers 409 `payout_in_progress` at once and gives its connection
 * back — fifty flushes of one seller sent at once would otherwise hold the pool's connections waiting for it, and
 * every tenant's request with them (test/integration/api/seller-payout-expiry.test.ts).
 *
 * Defends: SQL outside a store; a finished payout changed again; a payout and a ledger row's verify locking the
 * seller's rows in opposite orders (40P01); one seller's flushes holding the connection pool while its payout lock
 * is held. Does not defend: the amounts (two CHECKs do); a flush waiting on the seller's rows a verify holds (a
 * short transaction, bounded by the session's lock_timeout).
 */
import { tryXactLock } from '../../db/try-xact-lock.js';
import type { Knex } from 'knex';
import type { PoolClient } from 'pg';
import { unitOf } from '../../db/store-unit.js';
import { AppError } from '../../errors/app-error.js';
import { withPooledClient } from '../../db/wallet-transaction.js';
import { getAddress } from 'viem';
import type {
  CollectionBalance,
  CollectionWallet,
  CollectionWalletStore,
  StoreTransaction,
  PayoutLedger,
  PayoutMoves,
  PayoutStore,
  UnfinishedPayout,
} from './payout-stores.js';

const UNFINISHED = ['pending', 'submitted'];

type PayablesRow = { earned_micro: string; paid_micro: string };

/** The advisory lock of a seller's payouts: recording takes it for a transaction, moving for a session. */
const payoutLockName = (sellerId: string) => `payout:${sellerId}`;

/** What a flush refused because another holds the seller's payout lock is told to wait (s): a settlement's answer. */
const PAYOUT_IN_PROGRESS_RETRY_SECONDS = 5;

/** 409 `payout_in_progress`: another flush of the seller holds its payout lock; this one waited for nothing. */
function payoutInProgress(sellerId: string): AppError {
  return new AppError('payout_in_progress', {
    headers: { 'Retry-After': String(PAYOUT_IN_PROGRESS_RETRY_SECONDS) },
    recovery: { kind: 'retry_later', retry_after_seconds: PAYOUT_IN_PROGRESS_RETRY_SECONDS },
    fields: { seller_id: sellerId, retry_after_seconds: PAYOUT_IN_PROGRESS_RETRY_SECONDS },
  });
}

/** A payout lock that could not be released: its connection must not go back to the pool. */
class PayoutLockNotReleased extends Error {
  constructor(
    readonly sellerId: string,
    options?: ErrorOptions,
  ) {
    super('payout lock not released', options);
    this.name = 'PayoutLockNotReleased';
  }
}

/**
 * Lock order: the seller's collection wallets (by network), then its payables — the order in which verifying a
 * platform_mor ledger row takes them (its AFTER UPDATE triggers fire by name: `ledger_entries_collected_verified`
 * updates the wallet, then `ledger_entries_payables_verified` reads the payables FOR UPDATE; migrations
 * 20261128120000 and 20261125200400), and recording (`payout_flushes_collection_paid`, then
 * `payout_flushes_payables`) or failing (`payout_flushes_given_back`) a payout does. The opposite order deadlocks
 * with a verify of the seller's row (40P01). Both are locked at the first read of either, whichever the caller
 * asks for first (test/integration/db/payout-verify-lock-order.test.ts).
 */
function payoutLedger(trx: Knex.Transaction, sellerId: string): PayoutLedger {
  let locked: Promise<{ collections: CollectionBalance[]; payables: PayablesRow | undefined }> | undefined;
  const lockBoth = () =>
    (locked ??= (async () => {
      const collections = (await trx('platform_collection_wallets')
        .where({ seller_id: sellerId })
        .orderBy('network')
        .forUpdate()
        .select('wallet_id', 'network', 'collected_micro', 'paid_micro')) as CollectionBalance[];
      const payables = (await trx('seller_payables')
        .where({ seller_id: sellerId })
        .forUpdate()
        .first('earned_micro', 'paid_micro')) as PayablesRow | undefined;
      return { collections, payables };
    })());
  return {
    recorded: async (idempotencyKey) =>
      (await trx('payout_flushes').where({ seller_id: sellerId, idempotency_key: idempotencyKey })).length > 0,
    payables: async () => (await lockBoth()).payables,
    collections: async () => (await lockBoth()).collections,
    add: async (payout) => {
      await trx('payout_flushes').insert(payout);
    },
  };
}

function unfinishedQuery(db: Knex, sellerId: string) {
  return db('payout_flushes as p')
    .join('wallets as w', 'w.id', 'p.wallet_id')
    .where({ 'p.seller_id': sellerId })
    .whereIn('p.status', UNFINISHED)
    .orderBy([{ column: 'p.created_at' }, { column: 'p.id' }])
    .select('p.*', 'w.account_id');
}

/** Reads and writes on `client`, the connection holding the seller's payout lock (autocommit: no transaction). */
function payoutMoves(knex: Knex, client: PoolClient, sellerId: string): PayoutMoves {
  return {
    unfinished: async () => (await unfinishedQuery(knex, sellerId).connection(client)) as UnfinishedPayout[],
    progress: async (payoutId, changes) => {
      await knex('payout_flushes')
        .connection(client)
        .where({ id: payoutId })
        .whereIn('status', UNFINISHED)
        .update(changes);
    },
  };
}

export class PgPayoutStore implements PayoutStore {
  constructor(private readonly knex: Knex) {}

  async owesAny(sellerId: string): Promise<boolean> {
    const collected = await this.knex('platform_collection_wallets')
      .where({ seller_id: sellerId })
      .andWhereRaw('collected_micro > paid_micro')
      .first('wallet_id');
    const unfinished = await this.knex('payout_flushes')
      .where({ seller_id: sellerId })
      .whereIn('status', UNFINISHED)
      .first('id');
    return !!collected || !!unfinished;
  }

  async underPayoutLock(sellerId: string, work: (ledger: PayoutLedger) => Promise<void>): Promise<void> {
    await this.knex.transaction(async (trx) => {
      // Tried, not waited for (see the header): held elsewhere, the transaction ends at once, holding nothing.
      if (!(await tryXactLock(trx, payoutLockName(sellerId), 17))) throw payoutInProgress(sellerId);
      await work(payoutLedger(trx, sellerId));
    });
  }

  underMoveLock<T>(sellerId: string, work: (moves: PayoutMoves) => Promise<T>): Promise<T> {
    // withPooledClient drops the connection after an error it may not survive (PayoutLockNotReleased among them).
    return withPooledClient(this.knex, async (client) => {
      const name = payoutLockName(sellerId);
      // Tried, not waited for (see the header); not taken, nothing is held and the connection goes back as it was.
      const tried = (await this.knex
        .raw('SELECT pg_try_advisory_lock(hashtextextended(?, 17)) AS locked', [name])
        .connection(client)) as { rows: Array<{ locked: boolean }> };
      if (tried.rows[0]?.locked !== true) throw payoutInProgress(sellerId);
      const outcome = await work(payoutMoves(this.knex, client, sellerId)).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      let unlockError: unknown;
      const unlocked = await this.knex
        .raw('SELECT pg_advisory_unlock(hashtextextended(?, 17)) AS unlocked', [name])
        .connection(client)
        .then(
          (r: { rows: Array<{ unlocked: boolean }> }) => r.rows[0]?.unlocked === true,
          (err: unknown) => ((unlockError = err), false),
        );
      // The work's own error, if it failed, stays the cause (a database outage is still told as one).
      if (!unlocked) throw new PayoutLockNotReleased(sellerId, { cause: outcome.ok ? unlockError : outcome.error });
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    });
  }

  async unfinishedOf(sellerId: string): Promise<UnfinishedPayout[]> {
    return (await unfinishedQuery(this.knex, sellerId)) as UnfinishedPayout[];
  }

  async oldestPayTo(sellerId: string): Promise<string | undefined> {
    // Payouts are EVM transfers out of an EVM collection wallet: only a 0x pay-to can receive them.
    const row = (await this.knex('sellers_pay_to')
      .where({ seller_id: sellerId })
      .whereRaw(`left(address, 2) = '0x'`)
      .orderBy([{ column: 'created_at' }, { column: 'address' }])
      .first('address')) as { address: string } | undefined;
    return row?.address.trim();
  }
}

/** The platform's Treasury account's owner (one per database: a unique index). */
const PLATFORM_OWNER = { owner_type: 'platform', owner_id: 'merchant_of_record' } as const;

export class PgCollectionWalletStore implements CollectionWalletStore {
  constructor(private readonly knex: Knex) {}

  find(sellerId: string, network: string): Promise<CollectionWallet | undefined> {
    return this.findIn(this.knex, sellerId, network);
  }

  ensure(
    sellerId: string,
    network: string,
    accountId: string,
    create: () => Promise<{ id: string; address: string }>,
  ): Promise<CollectionWallet> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', [`collect:${sellerId}:${network}`]);
      const raced = await this.findIn(trx, sellerId, network);
      if (raced) return raced;
      const wallet = await create();
      await trx('platform_collection_wallets').insert({
        seller_id: sellerId,
        network,
        wallet_id: wallet.id,
        address: wallet.address.toLowerCase(),
        created_at: new Date(),
      });
      return {
        seller_id: sellerId,
        network,
        wallet_id: wallet.id,
        address: getAddress(wallet.address),
        account_id: accountId,
      };
    });
  }

  async platformAccount(create: (tx: StoreTransaction) => Promise<string>): Promise<string> {
    const existing = async (db: Knex | Knex.Transaction) =>
      (await db('treasury_accounts').where(PLATFORM_OWNER).first('id')) as { id: string } | undefined;
    const found = await existing(this.knex);
    if (found) return found.id;
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', ['platform-account']);
      const raced = await existing(trx);
      if (raced) return raced.id;
      return create(unitOf(trx));
    });
  }

  private async findIn(db: Knex | Knex.Transaction, sellerId: string, network: string) {
    const row = (await db('platform_collection_wallets as c')
      .join('wallets as w', 'w.id', 'c.wallet_id')
      .where({ 'c.seller_id': sellerId, 'c.network': network })
      .first('c.seller_id', 'c.network', 'c.wallet_id', 'c.address', 'w.account_id')) as CollectionWallet | undefined;
    return row ? { ...row, address: getAddress(row.address.trim()) } : undefined;
  }
}
