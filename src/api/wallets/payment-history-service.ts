/**
 * Payment history for buyers (docs/api.md, "Payment history"): the authorizations of one wallet, or of every
 * wallet of a Treasury account (an agent's), newest first, paged by (created_at, id) like every list. Each
 * row's status is derived here from what Treasury knows (src/shared/api-responses/payment-history-responses.ts):
 * its own row status, its `upto` settlement, a seller ledger row it verified on chain, and the clock.
 *
 * Defends: another account's payments being read — the caller passes the account its bearer resolves to and
 * every query is filtered by it (a wallet of another account is `wallet_not_found` before any row is read);
 * a seller's unverified word becoming a payment's transaction (only `verified` ledger rows naming this
 * authorization, its payer and network count). Does not defend: the account-wide page sorts that account's
 * authorizations (index (wallet_id, created_at) per wallet), so its cost grows with the account's history.
 */
import type { Knex } from 'knex';
import { formatUsd } from '../../../policy/money.js';
import { readKeysetPage, type PageRequest } from '../db/keyset-cursor.js';
import type { PaymentPage, PaymentView } from '../../shared/api-responses/payment-history-responses.js';

/** The id shape of authorizations, which this list's cursors name. */
const AUTHORIZATION_ID = /^auth_[0-9a-f]{24}$/;

interface PaymentRow {
  id: string;
  wallet_id: string;
  decision_id: string;
  kind: string;
  scheme: 'exact' | 'upto';
  network: string;
  to_address: string;
  amount_micro: string | number;
  valid_before: string | number;
  capability: string | null;
  resource: string | null;
  status: 'reserved' | 'signed' | 'released';
  settled_raw: string | null;
  settlement_tx: string | null;
  settled_at: Date | null;
  ledger_tx_hash: string | null;
  created_at: Date;
}

export class PaymentHistoryService {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => Date,
  ) {}

  /** One wallet's payments; the caller has checked the wallet belongs to the bearer's account. */
  async forWallet(walletId: string, page: PageRequest): Promise<PaymentPage> {
    return this.read(this.select().where({ wallet_id: walletId }), page);
  }

  /** The payments of every wallet (active or not) of a Treasury account. */
  async forAccount(accountId: string, page: PageRequest): Promise<PaymentPage> {
    const wallets = this.knex('wallets').select('id').where({ account_id: accountId });
    return this.read(this.select().whereIn('wallet_id', wallets), page);
  }

  private select(): Knex.QueryBuilder {
    // A verified seller ledger row naming this authorization, paid by its wallet on its network.
    const ledger = this.knex('ledger_entries as l')
      .select('l.tx_hash')
      .whereRaw('l.authorization_id = authorizations.id')
      .andWhere('l.status', 'verified')
      .andWhereRaw('lower(l.payer) = lower(authorizations.from_address)')
      .andWhereRaw('l.network = authorizations.network')
      .limit(1);
    return this.knex('authorizations').select(
      'id',
      'wallet_id',
      'decision_id',
      'kind',
      'scheme',
      'network',
      'to_address',
      'amount_micro',
      'valid_before',
      'capability',
      'resource',
      'status',
      'settled_raw',
      'settlement_tx',
      'settled_at',
      'created_at',
      ledger.as('ledger_tx_hash'),
    );
  }

  private async read(query: Knex.QueryBuilder, request: PageRequest): Promise<PaymentPage> {
    const { page, nextCursor } = await readKeysetPage<PaymentRow>(query, request, AUTHORIZATION_ID, 'desc');
    const now = this.clock().getTime();
    return { payments: page.map((row) => view(row, now)), next_cursor: nextCursor };
  }
}

function view(row: PaymentRow, nowMs: number): PaymentView {
  const validBeforeMs = Number(row.valid_before) * 1000;
  const txHash = row.settlement_tx ?? row.ledger_tx_hash?.trim() ?? null;
  const closed = validBeforeMs <= nowMs;
  const status: PaymentView['status'] =
    row.status === 'released'
      ? 'released'
      : txHash !== null && row.status === 'signed'
        ? 'settled'
        : closed
          ? 'expired'
          : row.status;
  return {
    id: row.id,
    wallet_id: row.wallet_id,
    status,
    kind: row.kind,
    scheme: row.scheme,
    network: row.network,
    amount_usd: formatUsd(BigInt(row.amount_micro)),
    // USDC has 6 decimals: raw units are micro-USD.
    settled_usd: row.settled_raw === null ? null : formatUsd(BigInt(row.settled_raw)),
    payee: row.to_address.trim(),
    resource: row.resource,
    capability: row.capability,
    decision_id: row.decision_id,
    tx_hash: txHash,
    tx_hash_source: row.settlement_tx ? 'settlement' : txHash ? 'seller_ledger' : null,
    created_at: row.created_at.toISOString(),
    valid_before: new Date(Math.min(validBeforeMs, 8.64e15)).toISOString(),
    settled_at: row.settled_at ? row.settled_at.toISOString() : null,
  };
}
