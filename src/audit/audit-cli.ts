/**
 * `npm run audit:verify [-- <chain_key>]`: verifies the hash chain of the audit ledger and names the
 * first broken row. Exit 0 when intact, 4 when broken.
 */
import { loadAppConfig } from '../config/app-config.js';
import { createKnex } from '../db/knex-client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { verifyAuditChain } from './audit-ledger.js';

async function main(): Promise<void> {
  const [command, chainKey] = process.argv.slice(2);
  if (command !== 'verify') {
    process.stderr.write('usage: audit-cli verify [chain_key]\n');
    process.exit(2);
  }
  const db = await resolveDatabase(loadAppConfig());
  const knex = createKnex(db.connectionString, 2, 'treasury-audit');
  try {
    const result = await verifyAuditChain(knex, chainKey);
    process.stdout.write(JSON.stringify(result) + '\n');
    process.exitCode = result.ok ? 0 : 4;
  } finally {
    await knex.destroy();
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`audit verify failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
