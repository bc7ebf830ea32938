/**
 * The PostgreSQL implementation of a seller's endpoints (`EndpointStore`, `EndpointSet` in ./seller-stores.ts):
 * every query names the seller, and every change to a seller's endpoint set as a whole runs in one transaction
 * under a per-seller advisory lock, so two changes (an endpoint added by hand, an OpenAPI refresh) never
 * interleave and a bound checked inside one holds when it commits.
 *
 * Defends: one seller's endpoint reached through another; an endpoint with ledger rows removed (checked, and the
 * ledger's foreign key as a second line). Does not defend: what the caller writes (the services decide it).
 */
import type { Knex } from 'knex';
import { readKeysetPage, type PageRequest } from '../../db/keyset-cursor.js';
import { AppError } from '../../errors/app-error.js';
import type { EndpointRow } from '../seller-views.js';
import type {
  EndpointChanges,
  EndpointSet,
  EndpointStore,
  NewEndpoint,
  RowPage,
  SourcedEndpoint,
} from './seller-stores.js';

/** The id shape of the rows the list's page cursors name. */
const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;

/** `route_prices`, `capabilities` and `discovery` are stored as JSON text. */
function encoded<
  T extends { route_prices?: Record<string, string>; capabilities?: string[]; discovery?: object | null },
>(row: T) {
  return {
    ...row,
    ...(row.discovery === undefined || row.discovery === null ? {} : { discovery: JSON.stringify(row.discovery) }),
    ...(row.route_prices === undefined ? {} : { route_prices: JSON.stringify(row.route_prices) }),
    ...(row.capabilities === undefined ? {} : { capabilities: JSON.stringify(row.capabilities) }),
  };
}

/**
 * Whether any ledger row names the endpoint: one lookup in the seller's per-day revenue (seller_revenue_days,
 * on its primary key's seller prefix, verified rows) and one among its unverified rows (their partial index),
 * rather than a scan of every ledger row, which has no endpoint index.
 */
async function endpointHasLedger(db: Knex | Knex.Transaction, sellerId: string, endpointId: string): Promise<boolean> {
  if (await db('seller_revenue_days').where({ seller_id: sellerId, endpoint_key: endpointId }).first('day'))
    return true;
  return !!(await db('ledger_entries')
    .where({ seller_id: sellerId, endpoint_id: endpointId })
    .whereNot({ status: 'verified' })
    .first('id'));
}

/** A seller's endpoint set inside the transaction that holds its lock. */
function endpointSet(trx: Knex.Transaction, sellerId: string): EndpointSet {
  return {
    list: async () => (await trx('endpoints').where({ seller_id: sellerId })) as SourcedEndpoint[],
    add: async (endpoint: NewEndpoint) => {
      try {
        const [row] = (await trx('endpoints').insert(encoded(endpoint)).returning('*')) as EndpointRow[];
        return row!;
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new AppError('endpoint_exists');
        throw err;
      }
    },
    change: async (endpointId: string, changes: EndpointChanges) => {
      await trx('endpoints').where({ id: endpointId, seller_id: sellerId }).update(encoded(changes));
    },
    remove: async (endpointId: string) => {
      await trx('endpoints').where({ id: endpointId, seller_id: sellerId }).delete();
    },
    hasLedger: (endpointId: string) => endpointHasLedger(trx, sellerId, endpointId),
    count: async () => {
      const [row] = (await trx('endpoints').where({ seller_id: sellerId }).count({ n: '*' })) as Array<{ n: string }>;
      return Number(row?.n ?? 0);
    },
  };
}

/** The columns an endpoint's view is made of (../seller-views.ts `endpointView`). */
const LISTED_COLUMNS = [
  'id',
  'seller_id',
  'slug',
  'method',
  'path',
  'path_pattern',
  'price_micro',
  'route_prices',
  'capabilities',
  'priced',
  'created_at',
  'updated_at',
];

export class PgEndpointStore implements EndpointStore {
  constructor(private readonly knex: Knex) {}

  /** A page of the seller's endpoints as the list shows them: never `discovery` (schemas up to 64 KiB a row). */
  pageOf(sellerId: string, request: PageRequest): Promise<RowPage<EndpointRow>> {
    return readKeysetPage<EndpointRow>(
      this.knex('endpoints').where({ seller_id: sellerId }).select(LISTED_COLUMNS),
      request,
      ENDPOINT_ID,
    );
  }

  async allOf(sellerId: string): Promise<EndpointRow[]> {
    return (await this.knex('endpoints')
      .where({ seller_id: sellerId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])) as EndpointRow[];
  }

  async change(sellerId: string, endpointId: string, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    const [row] = (await this.knex('endpoints')
      .where({ id: endpointId, seller_id: sellerId })
      .update(encoded(changes))
      .returning('*')) as EndpointRow[];
    return row;
  }

  async remove(sellerId: string, endpointId: string): Promise<'removed' | 'not_found' | 'has_ledger'> {
    if (await endpointHasLedger(this.knex, sellerId, endpointId)) return 'has_ledger';
    try {
      const deleted = await this.knex('endpoints').where({ id: endpointId, seller_id: sellerId }).delete();
      return deleted === 0 ? 'not_found' : 'removed';
    } catch (err) {
      // A ledger row reported between the check and the delete: its foreign key keeps the endpoint.
      if ((err as { code?: string }).code === '23503') return 'has_ledger';
      throw err;
    }
  }

  changeSet<T>(sellerId: string, work: (set: EndpointSet) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 19))', [`seller:${sellerId}`]);
      return work(endpointSet(trx, sellerId));
    });
  }
}
