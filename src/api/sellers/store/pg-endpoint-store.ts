/**
 * The PostgreSQL implementation of a seller's endpoints (`EndpointStore`, `EndpointSet` in ./seller-stores.ts):
 * every query names the seller, and every change to a seller's endpoint set as a whole runs in one transaction
 * under a per-seller advisory lock, so two changes (an endpoint added by hand, an OpenAPI refresh) never
 * interleave and a bound checked inside one holds when it commits. The lock is only ever tried, never waited
 * for: held by another change of the seller's set (a refresh holds it across up to ~4,000 statements), the
 * change answers 409 `seller_refresh_in_progress` at once and gives its connection back — thirty refreshes of
 * one seller sent at once would otherwise hold the pool's connections waiting for it, and every tenant's request
 * with them (test/integration/api/seller-refresh-lock.test.ts). Reads for a change set or a route table leave
 * `discovery` (up to 64 KiB a row) where it is stored: the refresh compares it there (`discoveryDiffers`).
 *
 * Defends: one seller's endpoint reached through another; an endpoint with ledger rows removed (checked, and the
 * ledger's foreign key as a second line); one seller's refreshes holding the connection pool while its lock is
 * held. Does not defend: what the caller writes (the services decide it).
 */
import { tryXactLock } from '../../db/try-xact-lock.js';
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

/** The seller's endpoint set lock: a refresh, an endpoint added by hand. */
const endpointSetLockName = (sellerId: string) => `seller:${sellerId}`;

/** What a change refused because another holds the seller's endpoint set lock is told to wait (s). */
const SELLER_REFRESH_RETRY_SECONDS = 5;

/** 409 `seller_refresh_in_progress`: another change holds the seller's endpoint set lock; this one waited for nothing. */
function sellerRefreshInProgress(sellerId: string): AppError {
  return new AppError('seller_refresh_in_progress', {
    headers: { 'Retry-After': String(SELLER_REFRESH_RETRY_SECONDS) },
    recovery: { kind: 'retry_later', retry_after_seconds: SELLER_REFRESH_RETRY_SECONDS },
    fields: { seller_id: sellerId, retry_after_seconds: SELLER_REFRESH_RETRY_SECONDS },
  });
}

/** A seller's endpoint set inside the transaction that holds its lock. */
function endpointSet(trx: Knex.Transaction, sellerId: string): EndpointSet {
  return {
    list: async () =>
      (await trx('endpoints')
        .where({ seller_id: sellerId })
        .select([...LISTED_COLUMNS, 'source'])) as SourcedEndpoint[],
    discoveryDiffers: async (wanted) => {
      if (wanted.length === 0) return new Set<string>();
      // One statement: the values go in as one JSON array and are compared as jsonb (key order aside).
      const { rows } = (await trx.raw(
        `SELECT e.id FROM endpoints e
           JOIN jsonb_to_recordset(?::jsonb) AS w(id text, discovery jsonb) ON w.id = e.id
          WHERE e.seller_id = ? AND e.discovery IS DISTINCT FROM w.discovery`,
        [JSON.stringify(wanted), sellerId],
      )) as { rows: Array<{ id: string }> };
      return new Set(rows.map((r) => r.id));
    },
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

  /** Every endpoint of the seller as the route table shows them: never `discovery`. */
  async allOf(sellerId: string): Promise<EndpointRow[]> {
    return (await this.knex('endpoints')
      .where({ seller_id: sellerId })
      .select(LISTED_COLUMNS)
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
      // Tried, not waited for (see the header): held elsewhere, the transaction ends at once, holding nothing.
      if (!(await tryXactLock(trx, endpointSetLockName(sellerId), 19))) throw sellerRefreshInProgress(sellerId);
      return work(endpointSet(trx, sellerId));
    });
  }
}
