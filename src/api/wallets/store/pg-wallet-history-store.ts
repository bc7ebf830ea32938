/**
 * The wallet history store on PostgreSQL (./wallet-history-store.ts): every query of a wallet's payments,
 * decisions and audit events, each filtered by the wallet or account its caller checked.
 *
 * Defends: a seller's unverified word becoming a payment's transaction (only a `verified` ledger row naming
 * the authorization, its payer and network is joined). Does not defend: whose wallet it is (the caller's
 * check, before any of these reads).
 */
import type { Knex } from 'knex';
import type { AuditHead } from '../../audit/audit-ledger.js';
import { verifyAuditSince } from '../../audit/verify-audit-since.js';
import { readKeysetPage, type PageRequest } from '../../db/keyset-cursor.js';
import type {
  AllowedRow,
  AuditEventRow,
  DenialRow,
  PaymentRow,
  ChainVerification,
  PaymentRowPage,
  WalletHistoryStore,
} from './wallet-history-store.js';

/** The id shape of authorizations, which the payment list's cursors name. */
const AUTHORIZATION_ID = /^auth_[0-9a-f]{24}$/;

/**
 * Rows recomputed per query when a request verifies a chain: each page is hashed synchronously, so a small
 * page keeps the event loop free for other requests between pages (about 10–20 ms of hashing each).
 */
const VERIFY_BATCH_ROWS = 1_000;

const NEWEST = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
] as const;

export class PgWalletHistoryStore implements WalletHistoryStore {
  constructor(private readonly knex: Knex) {}

  async paymentsOfWallet(walletId: string, page: PageRequest): Promise<PaymentRowPage> {
    return this.readPayments(this.payments().where({ wallet_id: walletId }), page);
  }

  async paymentsOfAccount(accountId: string, page: PageRequest): Promise<PaymentRowPage> {
    const wallets = this.knex('wallets').select('id').where({ account_id: accountId });
    return this.readPayments(this.payments().whereIn('wallet_id', wallets), page);
  }

  async newestDecisions(walletId: string, limit: number): Promise<{ denials: DenialRow[]; allowed: AllowedRow[] }> {
    const [denials, allowed] = await Promise.all([
      this.knex('policy_decisions')
        .where({ wallet_id: walletId })
        .orderBy([...NEWEST])
        .limit(limit),
      this.knex('authorizations')
        .where({ wallet_id: walletId })
        .orderBy([...NEWEST])
        .limit(limit)
        .select('id', 'decision_id', 'kind', 'amount_micro', 'to_address', 'capability', 'created_at'),
    ]);
    return { denials: denials as DenialRow[], allowed: allowed as AllowedRow[] };
  }

  async newestAuditEvents(walletId: string, limit: number): Promise<AuditEventRow[]> {
    return (await this.knex('audit_events')
      .where({ chain_key: walletId })
      .orderBy('seq', 'desc')
      .limit(limit)
      .select('seq', 'event_type', 'actor', 'created_at', 'prev_hash', 'hash')) as AuditEventRow[];
  }

  async verifyChain(walletId: string, since?: AuditHead): Promise<ChainVerification> {
    let head: AuditHead | undefined;
    const anchors = new Map(since ? [[walletId, { seq: Number(since.seq), hash: since.hash }]] : []);
    const verification = await verifyAuditSince(this.knex, anchors, {
      chainKey: walletId,
      batchRows: VERIFY_BATCH_ROWS,
      onHead: (h) => (head = { seq: h.seq, hash: h.hash }),
    });
    return head ? { verification, head } : { verification };
  }

  private payments(): Knex.QueryBuilder {
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

  private readPayments(query: Knex.QueryBuilder, request: PageRequest): Promise<PaymentRowPage> {
    return readKeysetPage<PaymentRow>(query, request, AUTHORIZATION_ID, 'desc');
  }
}
