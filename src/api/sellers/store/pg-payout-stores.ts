/**
 * The PostgreSQL implementations of the payouts' stores (./payout-stores.ts): `PgPayoutStore` and the collection
 * wallets (`PgCollectionWalletStore`, each created once per seller and network under an advisory lock, a unique
 * index as the second line). A payout is recorded
 * under a per-seller advisory lock with the seller's payables and collection wallets read FOR UPDATE, so a ledger
 * row verified meanwhile waits and is paid by the next flush; a payout's progress is written only while it is
 * `pending` or `submitted`.
 *
 * Defends: SQL outside a store; a finished payout changed again. Does not defend: the amounts (two CHECKs do).
 */
import type { Knex } from 'knex';
import { unitOf } from '../../db/store-unit.js';
import { getAddress } from 'viem';
import type {
  CollectionBalance,
  CollectionWallet,
  CollectionWalletStore,
  StoreTransaction,
  PayoutLedger,
  PayoutProgress,
  PayoutStore,
  UnfinishedPayout,
} from './payout-stores.js';

const UNFINISHED = ['pending', 'submitted'];

function payoutLedger(trx: Knex.Transaction, sellerId: string): PayoutLedger {
  return {
    recorded: async (idempotencyKey) =>
      (await trx('payout_flushes').where({ seller_id: sellerId, idempotency_key: idempotencyKey })).length > 0,
    payables: async () =>
      (await trx('seller_payables').where({ seller_id: sellerId }).forUpdate().first('earned_micro', 'paid_micro')) as
        { earned_micro: string; paid_micro: string } | undefined,
    collections: async () =>
      (await trx('platform_collection_wallets')
        .where({ seller_id: sellerId })
        .orderBy('network')
        .forUpdate()
        .select('wallet_id', 'network', 'collected_micro', 'paid_micro')) as CollectionBalance[],
    add: async (payout) => {
      await trx('payout_flushes').insert(payout);
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
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', [`payout:${sellerId}`]);
      await work(payoutLedger(trx, sellerId));
    });
  }

  async unfinishedOf(sellerId: string): Promise<UnfinishedPayout[]> {
    return (await this.knex('payout_flushes as p')
      .join('wallets as w', 'w.id', 'p.wallet_id')
      .where({ 'p.seller_id': sellerId })
      .whereIn('p.status', UNFINISHED)
      .orderBy([{ column: 'p.created_at' }, { column: 'p.id' }])
      .select('p.*', 'w.account_id')) as UnfinishedPayout[];
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

  async progress(payoutId: string, changes: PayoutProgress): Promise<void> {
    await this.knex('payout_flushes').where({ id: payoutId }).whereIn('status', UNFINISHED).update(changes);
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
