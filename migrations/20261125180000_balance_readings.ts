/**
 * The last USDC balance read on-chain for each (network, asset, address), kept in PostgreSQL so that the
 * stale figure served while the RPC is unreachable survives a restart and is shared by every API process
 * (until now each process held it in memory only).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('balance_readings', (t) => {
    t.string('network', 64).notNullable();
    t.string('asset', 42).notNullable();
    t.string('address', 42).notNullable();
    t.specificType('balance_raw', 'numeric(78, 0)').notNullable();
    t.timestamp('read_at', { useTz: true }).notNullable();
    t.primary(['network', 'asset', 'address']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('balance_readings');
}
