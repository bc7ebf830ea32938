/**
 * One unit of work shared by the stores of several wings: a PostgreSQL transaction, opaque to the services
 * that pass it down, so that writes of two wings (a sign-in and the agent it spawns, a platform wallet and
 * the Treasury account it needs) commit together or not at all. Only a PostgreSQL store turns a unit back
 * into its transaction (`trxOf`); an in-memory fake makes its own units.
 *
 * Defends: a service holding a knex transaction (and with it every table). Does not defend: a unit passed
 * to a store of another database, or kept after its unit of work ended (the transaction refuses it).
 */
import type { Knex } from 'knex';

export interface StoreUnit {
  readonly storeUnit: unique symbol;
}

/** Runs `work` in one unit of work. */
export interface UnitRunner {
  inUnit<T>(work: (unit: StoreUnit) => Promise<T>): Promise<T>;
}

/** The transaction a unit stands for (only units made by `unitOf` are ever passed back). */
export const trxOf = (unit: StoreUnit): Knex.Transaction => unit as unknown as Knex.Transaction;

/** The unit a knex transaction stands for. */
export const unitOf = (trx: Knex.Transaction): StoreUnit => trx as unknown as StoreUnit;

/** Units of work as knex transactions. */
export function pgUnitRunner(knex: Knex): UnitRunner {
  return { inUnit: (work) => knex.transaction((trx) => work(unitOf(trx))) };
}
