/**
 * The spelling CHECKs of the tables every payment and every settlement report writes, in an equivalent form that
 * PostgreSQL evaluates about ten times faster. A bounded repeat such as `~ '^0x[0-9a-fA-F]{40}$'` makes its regex
 * engine build a state per repeat on every row it checks (measured: 13 µs for 40 hex digits, 57 µs for 130), and
 * PostgreSQL checks every CHECK of a row on each insert and each update, whichever columns changed: a payment's
 * decision row, its authorization's insert and the update that records its signature spent about 90 µs of the
 * database's CPU on spelling. The same rule as a length and an unbounded class — `length(x) = 42 AND x ~
 * '^0x[0-9a-fA-F]*$'` — costs 1–2 µs and accepts exactly the same strings: the class matches one character each, so
 * a string of the given length that matches it is exactly one that matches the bounded repeat (and a NULL passes
 * both). test/integration/db/cheap-spelling-checks.test.ts holds each new check equal to the old on the hostile
 * inputs and on every spelling a row may have.
 *
 * Each constraint keeps its name; it is added NOT VALID and then validated. Inside the migration's one transaction
 * the ADD's ACCESS EXCLUSIVE lock is held until it commits, so writes to each table wait for its scan: on a large
 * deployment, run the migration at a quiet moment. Tables written rarely (wallets, wallet keys, balance readings,
 * pay-to addresses) keep their checks as they are.
 *
 * Down: the bounded forms back.
 */
import type { Knex } from 'knex';

const BASE58 = '1-9A-HJ-NP-Za-km-z';

/** `column` of `min`..`max` characters after `prefix`, each of the class `chars` (a bracket expression's inside). */
export function spelled(column: string, prefix: string, chars: string, min: number, max = min): string {
  const length = min === max ? `= ${prefix.length + min}` : `BETWEEN ${prefix.length + min} AND ${prefix.length + max}`;
  return `(length(${column}) ${length} AND ${column} ~ '^${prefix}[${chars}]*$')`;
}

/** The old bounded form of the same rule (for down). */
export function bounded(column: string, prefix: string, chars: string, min: number, max = min): string {
  return `${column} ~ '^${prefix}[${chars}]{${min === max ? min : `${min},${max}`}}$'`;
}

export type Form = typeof spelled;

/** The constraints rewritten: table, name, and the rule given the form of one spelling. */
export const CHECKS: ReadonlyArray<{ table: string; name: string; rule: (s: Form) => string }> = [
  {
    table: 'policy_decisions',
    name: 'policy_decisions_to_address_spelling',
    rule: (s) => `${s('to_address', '0x', '0-9a-fA-F', 40)} OR ${s('to_address', '', BASE58, 32, 44)}`,
  },
  ...(['to_address', 'from_address', 'asset'] as const).map((column) => ({
    table: 'authorizations',
    name: `authorizations_${column}_spelling`,
    rule: (s: Form) =>
      `(network LIKE 'eip155:%' AND ${s(column, '0x', '0-9a-fA-F', 40)}) OR (network LIKE 'solana:%' AND ${s(column, '', BASE58, 32, 44)})`,
  })),
  {
    table: 'authorizations',
    name: 'authorizations_settlement_tx_spelling',
    rule: (s) =>
      `settlement_tx IS NULL OR (network LIKE 'eip155:%' AND ${s('settlement_tx', '0x', '0-9a-f', 64)}) OR (network LIKE 'solana:%' AND ${s('settlement_tx', '', BASE58, 64, 88)})`,
  },
  {
    table: 'ledger_entries',
    name: 'ledger_entries_spelling',
    rule: (s) =>
      `(network LIKE 'eip155:%' AND ${s('tx_hash', '0x', '0-9a-fA-F', 64)} AND ${s('payer', '0x', '0-9a-fA-F', 40)}) OR (network LIKE 'solana:%' AND ${s('tx_hash', '', BASE58, 64, 88)} AND ${s('payer', '', BASE58, 32, 44)})`,
  },
  {
    table: 'seller_payment_ids',
    name: 'seller_payment_ids_id',
    rule: (s) => s('payment_id', '', 'A-Za-z0-9_-', 16, 128),
  },
  {
    table: 'seller_payment_ids',
    name: 'seller_payment_ids_fingerprint',
    rule: (s) => s('fingerprint', '', '0-9a-f', 64),
  },
];

async function replace(knex: Knex, form: Form): Promise<void> {
  for (const { table, name, rule } of CHECKS) {
    await knex.raw(`ALTER TABLE ?? DROP CONSTRAINT ??, ADD CONSTRAINT ?? CHECK (${rule(form)}) NOT VALID`, [
      table,
      name,
      name,
    ]);
    await knex.raw('ALTER TABLE ?? VALIDATE CONSTRAINT ??', [table, name]);
  }
}

export async function up(knex: Knex): Promise<void> {
  await replace(knex, spelled);
}

export async function down(knex: Knex): Promise<void> {
  await replace(knex, bounded);
}
