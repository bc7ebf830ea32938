/**
 * The PostgreSQL implementation of the ledger verifier's store (`LedgerVerificationStore`, ./ledger-stores.ts):
 * the fair claim (./ledger-fair-claim.ts), the row's claim, recipients and whether its transfer is the platform's
 * own (./ledger-row-claim.ts), and each verdict written only while the row is still `pending` — a verified row
 * with the mode its recipient on chain made it, which the rollup triggers then count.
 *
 * Defends: one transfer backing two verified rows (the unique index on verified transfers decides, and `verify`
 * answers false for the loser); a verdict overwriting a row another process decided meanwhile (every write
 * names `status = 'pending'`). Does not defend: what the verdict is (the verifier decides it).
 */
import type { Knex } from 'knex';
import { claimDueLedgerRows, type ClaimedLedgerRow, type FairClaimOptions } from './ledger-fair-claim.js';
import {
  linkAuthorization,
  platformTransfer,
  recipientsOf,
  type AuthorizationLink,
  type RowClaim,
  type RowRecipients,
} from './ledger-row-claim.js';
import type { MinedTransaction } from '../../chain/balance-reader.js';
import type { CheckRecord, LedgerVerificationStore } from './ledger-stores.js';

export class PgLedgerVerificationStore implements LedgerVerificationStore {
  constructor(private readonly knex: Knex) {}

  async reopenParked(at: Date): Promise<void> {
    await this.knex.raw(
      `UPDATE ledger_entries SET next_check_at = ? WHERE status = 'pending' AND reason IN ('rpc_not_configured', 'network_not_supported')`,
      [at],
    );
  }

  async pendingCount(): Promise<number> {
    const [counted] = (await this.knex.raw(`SELECT count(*)::int AS n FROM ledger_entries WHERE status = 'pending'`))
      .rows as Array<{ n: number }>;
    return counted?.n ?? 0;
  }

  claimDue(options: FairClaimOptions): Promise<{ rows: ClaimedLedgerRow[]; moreDue: boolean }> {
    return claimDueLedgerRows(this.knex, options);
  }

  async claimOf(rowId: string): Promise<RowClaim> {
    const claim = (await this.knex('ledger_entries').where({ id: rowId }).first('payout_mode', 'nonce')) as
      RowClaim | undefined;
    return { payout_mode: claim?.payout_mode ?? 'direct', nonce: claim?.nonce?.trim() ?? null };
  }

  recipientsOf(row: { seller_id: string; network: string }): Promise<RowRecipients> {
    return recipientsOf(this.knex, row);
  }

  platformTransfer(row: { payer: string; network: string; tx_hash: string }): Promise<boolean> {
    return platformTransfer(this.knex, row);
  }

  linkAuthorization(
    row: { payer: string; network: string },
    nonce: string,
    tx: MinedTransaction,
    asset: string,
  ): Promise<AuthorizationLink | undefined> {
    return linkAuthorization(this.knex, row, nonce, tx, asset);
  }

  async keepPending(rowId: string, check: CheckRecord, reason: string, nextCheckAt: Date): Promise<void> {
    await this.pending(rowId).update({ ...check, reason, next_check_at: nextCheckAt });
  }

  async reject(rowId: string, check: CheckRecord, reason: string): Promise<void> {
    await this.pending(rowId).update({ ...check, status: 'rejected', reason });
  }

  async verify(
    rowId: string,
    check: CheckRecord,
    logIndex: number,
    at: Date,
    link: AuthorizationLink | undefined,
    mode: RowClaim['payout_mode'],
  ): Promise<boolean> {
    try {
      // The mode is written with the status: the triggers count a platform_mor row into its collection
      // wallet's collected and the seller's earned as it becomes verified, by the mode it has then.
      await this.pending(rowId).update({
        ...check,
        status: 'verified',
        payout_mode: mode,
        reason: null,
        log_index: logIndex,
        verified_at: at,
        ...(link ? { authorization_id: link.authorization_id, decision_id: link.decision_id } : {}),
      });
      return true;
    } catch (err) {
      if ((err as { constraint?: string }).constraint !== 'ledger_entries_verified_transfer_unique') throw err;
      return false;
    }
  }

  private pending(rowId: string): Knex.QueryBuilder {
    return this.knex('ledger_entries').where({ id: rowId, status: 'pending' });
  }
}
