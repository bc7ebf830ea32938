/**
 * Migration 20261201160000 (money bounds checks): PostgreSQL refuses, whoever writes it, a row the API's schemas
 * would not let through — a ledger amount outside 1..10^15 or a payout mode no code knows, an endpoint price
 * outside 0..10^15, a payout of 0 or less, a negative running total (seller_payables, platform_collection_wallets),
 * a seller's payout mode or protocol outside its enum. Each bound is tried directly with knex, just past its edge
 * (SQLSTATE 23514, naming the constraint) and at its edge (stored). The constraints are stored validated; down
 * drops them; a row already outside its bounds fails the migration, which then changes nothing.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CHECKS, MAX_AMOUNT_MICRO } from '../../../migrations/20261201160000_money_bounds_checks.js';
import { MAX_AMOUNT_MICRO as SCHEMA_MAX } from '../../../src/shared/amount-bounds.js';
import { listPendingMigrations } from '../../../src/api/db/knex-client.js';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261201160000_money_bounds_checks.ts';
const NETWORK = 'eip155:84532';
const ABOVE_MAX = (BigInt(MAX_AMOUNT_MICRO) + 1n).toString();
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** One bound: how a row carrying `value` in the bounded column is inserted, and which constraint refuses it. */
interface Bound {
  what: string;
  constraint: string;
  refused: string[];
  accepted: string[];
  insert: (value: string) => Promise<unknown>;
}

describe('money bounds checks (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);
  const now = new Date();

  /** A seller (its own account), with `fields` over the defaults. */
  const seller = async (fields: Record<string, string> = {}) => {
    const id = `sel_${hex(12)}`;
    await db.knex('accounts').insert({ id: `acct_${id}`, created_at: now });
    await db.knex('sellers').insert({
      id,
      account_id: `acct_${id}`,
      name: id,
      slug: id,
      created_at: now,
      updated_at: now,
      ...fields,
    });
    return id;
  };
  const ledgerRow = async (sellerId: string, fields: Record<string, string>) =>
    db.knex('ledger_entries').insert({
      id: `led_${hex(12)}`,
      seller_id: sellerId,
      tx_hash: `0x${hex(32)}`,
      payer: `0x${hex(20)}`,
      amount_micro: '1000',
      network: NETWORK,
      created_at: now,
      ...fields,
    });
  const endpoint = (sellerId: string, price: string) => {
    const slug = `ep-${hex(6)}`;
    return db.knex('endpoints').insert({
      id: `ep_${hex(12)}`,
      seller_id: sellerId,
      slug,
      path: `/${slug}`,
      price_micro: price,
      created_at: now,
      updated_at: now,
    });
  };
  const payables = async (fields: Record<string, string>) =>
    db.knex('seller_payables').insert({ seller_id: await seller(), ...fields });
  /** A collection wallet (a platform wallet of its own) of a new seller, with `collected_micro` = `collected`. */
  const collectionWallet = async (collected: string) => {
    const sellerId = await seller({ payout_mode: 'platform_mor' });
    const walletId = `wal_${hex(12)}`;
    const address = `0x${hex(20)}`;
    await db.knex('treasury_accounts').insert({
      id: `acct_t_${sellerId}`,
      owner_type: 'platform',
      owner_id: sellerId,
      account_key_ref: 'test',
      created_at: now,
    });
    await db.knex('wallets').insert({
      id: walletId,
      account_id: `acct_t_${sellerId}`,
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
    return db.knex('platform_collection_wallets').insert({
      seller_id: sellerId,
      network: NETWORK,
      wallet_id: walletId,
      address,
      collected_micro: collected,
      created_at: now,
    });
  };
  const stored = async () => {
    const { rows } = await db.knex.raw<{ rows: Array<{ name: string; valid: boolean }> }>(
      'SELECT conname AS name, convalidated AS valid FROM pg_constraint WHERE conname = ANY(?) ORDER BY conname',
      [CHECKS.map((c) => c.name)],
    );
    return rows;
  };

  it('the migration holds the bound the schemas hold (MAX_AMOUNT_MICRO)', () => {
    assert.equal(BigInt(MAX_AMOUNT_MICRO), SCHEMA_MAX);
  });

  it('a row already outside its bounds fails the migration (23514), which changes nothing', async () => {
    const sellerId = await seller();
    await ledgerRow(sellerId, { id: 'led_zero_amount_before_up', amount_micro: '0' });
    await assert.rejects(db.knex.migrate.up(), (err: { code?: string; constraint?: string }) => {
      assert.equal(err.code, '23514');
      assert.equal(err.constraint, 'ledger_entries_amount_bounds');
      return true;
    });
    assert.deepEqual(await stored(), [], 'no constraint of the migration stays');
    assert.equal((await listPendingMigrations(db.knex))[0], MIGRATION, 'the migration is still to run');
    await db.knex('ledger_entries').where({ id: 'led_zero_amount_before_up' }).delete();
  });

  it('up adds every constraint, validated; down drops them; up again', async () => {
    await db.knex.migrate.up();
    const added = await stored();
    assert.deepEqual(
      added.map((c) => c.name),
      CHECKS.map((c) => c.name).sort(),
    );
    for (const c of added) assert.ok(c.valid, `${c.name} is validated`);
    await db.knex.migrate.down();
    assert.deepEqual(await stored(), []);
    // Without them, PostgreSQL stores what no route accepts.
    await ledgerRow(await seller({ payout_mode: 'mor' }), { id: 'led_zero_amount_after_down', amount_micro: '0' });
    await db.knex('ledger_entries').where({ id: 'led_zero_amount_after_down' }).delete();
    await db.knex('sellers').where({ payout_mode: 'mor' }).delete();
    await db.knex.migrate.up();
    assert.equal((await stored()).length, CHECKS.length);
  });

  it('each bound refuses the value just past it (23514, by name) and stores its edge', async () => {
    const owner = await seller({ payout_mode: 'platform_mor' });
    // What a payout of 1 is counted against (a `recorded` payout comes out of no collection wallet).
    await db.knex('seller_payables').insert({ seller_id: owner, earned_micro: '1000' });
    const bounds: Bound[] = [
      {
        what: 'ledger_entries.amount_micro',
        constraint: 'ledger_entries_amount_bounds',
        refused: ['0', '-1', ABOVE_MAX],
        accepted: ['1', MAX_AMOUNT_MICRO],
        insert: (v) => ledgerRow(owner, { amount_micro: v }),
      },
      {
        what: 'ledger_entries.payout_mode',
        constraint: 'ledger_entries_payout_mode_check',
        refused: ['', 'platform', 'DIRECT', 'direct '],
        accepted: ['direct', 'platform_mor'],
        insert: (v) => ledgerRow(owner, { payout_mode: v }),
      },
      {
        what: 'endpoints.price_micro',
        constraint: 'endpoints_price_bounds',
        refused: ['-1', ABOVE_MAX],
        accepted: ['0', MAX_AMOUNT_MICRO],
        insert: (v) => endpoint(owner, v),
      },
      {
        what: 'payout_flushes.amount_micro',
        constraint: 'payout_flushes_amount_positive',
        refused: ['0', '-1'],
        accepted: ['1'],
        insert: (v) =>
          db.knex('payout_flushes').insert({
            id: `po_${hex(12)}`,
            seller_id: owner,
            amount_micro: v,
            created_by: 'test',
            created_at: now,
          }),
      },
      {
        what: 'seller_payables.paid_micro',
        constraint: 'seller_payables_paid_nonnegative',
        refused: ['-1'],
        accepted: ['0'],
        insert: (v) => payables({ earned_micro: '0', paid_micro: v }),
      },
      {
        what: 'seller_payables.advance_micro',
        constraint: 'seller_payables_advance_nonnegative',
        refused: ['-1'],
        accepted: ['0'],
        insert: (v) => payables({ advance_micro: v }),
      },
      {
        // Needs no CHECK of its own: paid_micro >= 0 and paid_micro <= earned_micro.
        what: 'seller_payables.earned_micro',
        constraint: 'seller_payables_paid_within_earned',
        refused: ['-1'],
        accepted: ['0'],
        insert: (v) => payables({ earned_micro: v }),
      },
      {
        // Already held before this migration: 0 <= paid_micro <= collected_micro.
        what: 'platform_collection_wallets.collected_micro',
        constraint: 'platform_collection_paid_within_collected',
        refused: ['-1'],
        accepted: ['0'],
        insert: (v) => collectionWallet(v),
      },
      {
        what: 'sellers.payout_mode',
        constraint: 'sellers_payout_mode_check',
        refused: ['', 'mor', 'Direct'],
        accepted: ['direct', 'platform_mor'],
        insert: (v) => seller({ payout_mode: v }),
      },
      {
        what: 'sellers.protocol',
        constraint: 'sellers_protocol_check',
        refused: ['', 'x403', 'MPP'],
        accepted: ['x402', 'mpp'],
        insert: (v) => seller({ protocol: v }),
      },
    ];
    for (const b of bounds) {
      for (const value of b.refused)
        await assert.rejects(
          b.insert(value),
          (err: { code?: string; constraint?: string }) => {
            assert.deepEqual([err.code, err.constraint], ['23514', b.constraint], `${b.what} = ${value}`);
            return true;
          },
          `${b.what} = ${JSON.stringify(value)} is refused`,
        );
      for (const value of b.accepted) await b.insert(value);
    }
    // The running totals are refused past their bounds on an update too (a trigger's or anyone's).
    await assert.rejects(
      db.knex('seller_payables').where({ seller_id: owner }).update({ paid_micro: -1 }),
      /seller_payables_paid_nonnegative/,
    );
    await assert.rejects(
      db.knex('seller_payables').where({ seller_id: owner }).update({ advance_micro: -1 }),
      /seller_payables_advance_nonnegative/,
    );
  });
});
