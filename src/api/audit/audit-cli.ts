/**
 * `npm run audit:verify [-- <chain_key>] [--heads-in FILE [--since-heads]] [--heads-out FILE]`: verifies the
 * hash chains of the audit ledger and names the first broken row. `--heads-in` checks the heads an earlier run
 * recorded (each must still be there, with the same hash); with `--since-heads` only the rows from those heads
 * on are read (./verify-audit-since.ts: what it does not see); `--heads-out` records this run's heads once it
 * held (./audit-heads.ts). Prints one JSON line. Exit 0 when intact, 4 when broken, 2 for a usage error or a heads
 * file that is not one of ours, 1 when the database cannot be read.
 */
import { parseArgs } from 'node:util';
import { loadAppConfig } from '../config/app-config.js';
import { createKnex } from '../db/knex-client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { AuditHeadsFileError, AuditHeadsWriter, readAuditHeads } from './audit-heads.js';
import { verifyAuditChain, type ChainHead } from './audit-ledger.js';
import { verifyAuditSince } from './verify-audit-since.js';

const USAGE = 'usage: audit-cli verify [chain_key] [--heads-in FILE [--since-heads]] [--heads-out FILE]\n';

function usage(detail?: string): never {
  process.stderr.write(`${detail ? `${detail}\n` : ''}${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { 'heads-in': { type: 'string' }, 'heads-out': { type: 'string' }, 'since-heads': { type: 'boolean' } },
    });
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  const [command, chainKey, ...extra] = parsed.positionals;
  if (command !== 'verify' || extra.length > 0) usage();
  const headsIn = parsed.values['heads-in'];
  const headsOut = parsed.values['heads-out'];
  const sinceHeads = parsed.values['since-heads'] === true;
  if (sinceHeads && !headsIn) usage('audit verify: --since-heads needs --heads-in FILE');

  let anchors;
  try {
    anchors = headsIn ? await readAuditHeads(headsIn) : undefined;
  } catch (err) {
    if (err instanceof AuditHeadsFileError) usage(`audit verify: heads file refused: ${err.message}`);
    throw err;
  }
  let writer: AuditHeadsWriter | undefined;
  try {
    writer = headsOut ? new AuditHeadsWriter(headsOut) : undefined;
  } catch (err) {
    usage(`audit verify: cannot write beside ${headsOut}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }

  try {
    const db = await resolveDatabase(loadAppConfig());
    const knex = createKnex(db.connectionString, 2, 'treasury-audit');
    try {
      const out = writer;
      const onHead = out ? { onHead: (head: ChainHead) => out.add(head) } : {};
      const result =
        sinceHeads && anchors
          ? await verifyAuditSince(knex, anchors, { chainKey, ...onHead })
          : await verifyAuditChain(knex, chainKey, { ...(anchors ? { anchors } : {}), ...onHead });
      // Heads are recorded only from a ledger that held.
      if (out && result.ok) out.commit();
      process.stdout.write(
        JSON.stringify({
          ...result,
          mode: sinceHeads ? 'since_heads' : 'full',
          ...(anchors ? { anchors_checked: anchors.size } : {}),
          ...(out && result.ok ? { heads_written: out.written } : {}),
        }) + '\n',
      );
      process.exitCode = result.ok ? 0 : 4;
    } finally {
      await knex.destroy();
      await db.stop();
    }
  } finally {
    // Removes the temporary file on every path but a commit (after which there is none left to remove).
    writer?.discard();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`audit verify failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
