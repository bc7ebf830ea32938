/**
 * What a wallet has spent today by the ledger's own count: the `spent_micro` of its `day` row in
 * wallet_spend_totals, as a string, for the suites that check a payment was counted once (or not at all).
 * It reads; it changes nothing. A wallet with no day row fails the check that calls it.
 */
import assert from 'node:assert/strict';
import type { Knex } from '../../src/api/db/knex-client.js';

export async function daySpentMicro(knex: Knex, walletId: string): Promise<string> {
  const day = await knex('wallet_spend_totals').where({ wallet_id: walletId, window_kind: 'day' }).first();
  assert.ok(day, `no day total for ${walletId}`);
  return String(day.spent_micro);
}
