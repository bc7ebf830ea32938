/**
 * The PostgreSQL implementations of the sellers wing's stores (./seller-stores.ts): every query they stand for,
 * and nothing else. Each read is bounded (a limit, or the sellers it is given) and scoped to the account or
 * sellers it names.
 *
 * Defends: SQL outside a store; an unbounded read from a request — the gate's catalogue reads only the columns
 * selling takes, and an endpoint's declarations (capabilities, schemas: up to ~72 KiB each) only within the byte
 * budget it is given, counted in PostgreSQL. Does not defend: rows of the wrong shape in the database (the
 * migrations' constraints do); an endpoint's `route_prices`, read whole (the gate prices with them; their size
 * is the request schemas' bound).
 */
import type { Knex } from 'knex';
import type { PageRequest } from '../../db/keyset-cursor.js';
import { readAccountPage } from '../../db/account-page.js';
import type { SellerRow } from '../seller-views.js';
import type {
  GateCatalogueStore,
  GateEndpointRow,
  NewSeller,
  RowPage,
  SellerChanges,
  SellerPayTo,
  SellerStore,
} from './seller-stores.js';

/** The id shape of the rows the list's page cursors name. */
const SELLER_ID = /^sel_[0-9a-f]{24}$/;

/** `capabilities` is stored as JSON text. */
const encoded = <T extends { capabilities?: string[] | undefined }>(row: T) =>
  row.capabilities === undefined ? row : { ...row, capabilities: JSON.stringify(row.capabilities) };

export class PgSellerStore implements SellerStore {
  constructor(private readonly knex: Knex) {}

  async slugTaken(slug: string): Promise<boolean> {
    return !!(await this.knex('sellers').where({ slug }).first('id'));
  }

  async add(seller: NewSeller, maxPerAccount: number): Promise<'added' | 'slug_taken' | 'limit_reached'> {
    try {
      return await this.knex.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', [`sellers:${seller.account_id}`]);
        const held = trx('sellers').where({ account_id: seller.account_id }).select(trx.raw('1')).limit(maxPerAccount);
        const { n } = (await trx.from(held.as('s')).count({ n: '*' }).first()) as { n: string | number };
        if (Number(n) >= maxPerAccount) return 'limit_reached';
        await trx('sellers').insert(encoded(seller));
        return 'added';
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return 'slug_taken';
      throw err;
    }
  }

  async byId(sellerId: string): Promise<SellerRow | undefined> {
    return (await this.knex('sellers').where({ id: sellerId }).first()) as SellerRow | undefined;
  }

  pageOf(accountId: string, request: PageRequest): Promise<RowPage<SellerRow>> {
    return readAccountPage<SellerRow>(this.knex, 'sellers', accountId, request, SELLER_ID);
  }

  async change(sellerId: string, changes: SellerChanges): Promise<SellerRow | undefined> {
    const [row] = (await this.knex('sellers')
      .where({ id: sellerId })
      .update(encoded(changes))
      .returning('*')) as SellerRow[];
    return row;
  }

  async keepVerificationToken(sellerId: string, token: string): Promise<string> {
    await this.knex('sellers')
      .where({ id: sellerId })
      .whereNull('verification_token')
      .update({ verification_token: token });
    const row = await this.knex('sellers').where({ id: sellerId }).first('verification_token');
    return row.verification_token as string;
  }

  async markOriginVerified(sellerId: string, origin: string, at: Date): Promise<SellerRow | undefined> {
    const [row] = (await this.knex('sellers')
      .where({ id: sellerId, origin })
      // A fresh proof: the next re-check is one interval after it (src/api/sellers/proofs/proof-recheck-store.ts).
      .update({ verified_at: at, origin_recheck_at: null })
      .returning('*')) as SellerRow[];
    return row;
  }
}

const OLDEST_FIRST = [{ column: 'created_at' }, { column: 'id' }];

/** What selling an endpoint takes (GateEndpointRow): never its description or anything else it stores. */
const GATE_COLUMNS = [
  'id',
  'seller_id',
  'slug',
  'method',
  'path',
  'path_pattern',
  'price_micro',
  'route_prices',
  'priced',
] as const;

/** The input and output schemas of `discovery` (what the gate declares), or null when it has neither. */
const DECLARED_SCHEMAS = `CASE WHEN discovery->'input_schema' IS NOT NULL OR discovery->'output_schema' IS NOT NULL
  THEN jsonb_strip_nulls(jsonb_build_object('input_schema', discovery->'input_schema',
                                            'output_schema', discovery->'output_schema')) END`;

export class PgGateCatalogueStore implements GateCatalogueStore {
  constructor(private readonly knex: Knex) {}

  async managedSellersOf(accountId: string, limit: number): Promise<SellerRow[]> {
    return (await this.knex('sellers')
      .where({ account_id: accountId, protocol: 'mpp' })
      .orderBy(OLDEST_FIRST)
      .limit(limit)) as SellerRow[];
  }

  async endpointsOf(sellerIds: readonly string[], limit: number, declarationBytes: number): Promise<GateEndpointRow[]> {
    if (!sellerIds.length) return [];
    const rows = this.knex('endpoints')
      .whereIn('seller_id', [...sellerIds])
      .orderBy(OLDEST_FIRST)
      .limit(limit)
      .select(...GATE_COLUMNS, 'capabilities', 'created_at', this.knex.raw(`${DECLARED_SCHEMAS} AS declared`));
    // The declaration budget is spent in the database: past it, neither text leaves PostgreSQL.
    const within = (column: string, as: string) =>
      this.knex.raw(
        `CASE WHEN sum(octet_length(capabilities::text) + coalesce(octet_length(declared::text), 0))
           OVER (ORDER BY created_at, id ROWS UNBOUNDED PRECEDING) <= ? THEN ${column} END AS ${as}`,
        [declarationBytes],
      );
    return (await this.knex
      .from(rows.as('e'))
      .select(...GATE_COLUMNS, within('capabilities', 'capabilities'), within('declared', 'discovery'))
      .orderBy(OLDEST_FIRST)) as GateEndpointRow[];
  }

  async payToOf(sellerIds: readonly string[]): Promise<SellerPayTo[]> {
    if (!sellerIds.length) return [];
    return (await this.knex('sellers_pay_to')
      .whereIn('seller_id', [...sellerIds])
      .orderBy([{ column: 'created_at' }, { column: 'address' }])
      .select('seller_id', 'address')) as SellerPayTo[];
  }

  async managedSellerOfEndpoint(accountId: string, endpointId: string): Promise<SellerRow | undefined> {
    return (await this.knex('endpoints as e')
      .join('sellers as s', 's.id', 'e.seller_id')
      .where({ 'e.id': endpointId, 's.account_id': accountId, 's.protocol': 'mpp' })
      .first('s.*')) as SellerRow | undefined;
  }
}
