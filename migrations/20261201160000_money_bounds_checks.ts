/**
 * PostgreSQL holds the money columns and the seller enums to the bounds the API's schemas hold them to, so a row
 * written by another process, another version of the service, a script or by hand cannot store what no route
 * accepts (an amount of 0 or -5, or one past 10^15, counted into a rollup; a seller in a payout mode no code knows).
 *
 *   - `ledger_entries.amount_micro` 1..10^15: a report's `amount` (src/shared/ledger-report-schema.ts,
 *     `rawAmount`: positive, at most MAX_AMOUNT_MICRO = 10^15, src/shared/amount-bounds.ts);
 *   - `ledger_entries.payout_mode` and `sellers.payout_mode` 'direct' | 'platform_mor', `sellers.protocol` 'x402' |
 *     'mpp' (src/api/sellers/seller-schemas.ts, src/shared/api-responses/seller-responses.ts);
 *   - `endpoints.price_micro` 0..10^15: a price may be "0" (a free route, and the placeholder of an operation
 *     ingested unpriced, migration 20261128130000);
 *   - `payout_flushes.amount_micro` > 0: a flush records a payout only of a positive amount (as it always has);
 *   - `seller_payables.paid_micro` and `advance_micro` >= 0. `earned_micro` >= 0 follows (paid_micro <= earned_micro,
 *     CHECK seller_payables_paid_within_earned), as `platform_collection_wallets.collected_micro` >= 0 already does
 *     (0 <= paid_micro <= collected_micro, CHECK platform_collection_paid_within_collected): no CHECK of their own.
 *
 * Each constraint is added NOT VALID and then validated, as migration 20261201100000 does. Both run in this
 * migration's transaction: a row already outside its bounds fails the migration (23514, naming the constraint) and
 * nothing is changed — such a row is for a person to look at, not for a migration to rewrite. Adding a CHECK takes
 * its table's ACCESS EXCLUSIVE lock, held until the migration commits (the validating scans of ledger_entries and
 * payout_flushes included): writes to these tables wait that long.
 * test/integration/db/money-bounds-checks.test.ts holds every bound at both its edges.
 *
 * Down drops them.
 */
import type { Knex } from 'knex';

/** 10^15 micro-USD (10^9 USD): MAX_AMOUNT_MICRO of src/shared/amount-bounds.ts (a migration imports nothing else). */
export const MAX_AMOUNT_MICRO = '1000000000000000';

/** The constraints added: table, name and rule. */
export const CHECKS: ReadonlyArray<{ table: string; name: string; rule: string }> = [
  {
    table: 'ledger_entries',
    name: 'ledger_entries_amount_bounds',
    rule: `amount_micro BETWEEN 1 AND ${MAX_AMOUNT_MICRO}`,
  },
  {
    table: 'ledger_entries',
    name: 'ledger_entries_payout_mode_check',
    rule: `payout_mode IN ('direct', 'platform_mor')`,
  },
  { table: 'endpoints', name: 'endpoints_price_bounds', rule: `price_micro BETWEEN 0 AND ${MAX_AMOUNT_MICRO}` },
  { table: 'seller_payables', name: 'seller_payables_paid_nonnegative', rule: 'paid_micro >= 0' },
  { table: 'seller_payables', name: 'seller_payables_advance_nonnegative', rule: 'advance_micro >= 0' },
  { table: 'payout_flushes', name: 'payout_flushes_amount_positive', rule: 'amount_micro > 0' },
  { table: 'sellers', name: 'sellers_payout_mode_check', rule: `payout_mode IN ('direct', 'platform_mor')` },
  { table: 'sellers', name: 'sellers_protocol_check', rule: `protocol IN ('x402', 'mpp')` },
];

export async function up(knex: Knex): Promise<void> {
  for (const { table, name, rule } of CHECKS) {
    await knex.raw(`ALTER TABLE ?? ADD CONSTRAINT ?? CHECK (${rule}) NOT VALID`, [table, name]);
    await knex.raw('ALTER TABLE ?? VALIDATE CONSTRAINT ??', [table, name]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, name } of [...CHECKS].reverse())
    await knex.raw('ALTER TABLE ?? DROP CONSTRAINT ??', [table, name]);
}
