/**
 * Payment history for buyers (docs/api.md, "Payment history"): the authorizations of one wallet, or of every
 * wallet of a Treasury account (an agent's), newest first, paged by (created_at, id) like every list. Each
 * row's status is derived here from what Treasury knows (src/shared/api-responses/payment-history-responses.ts):
 * its own row status, its reported settlement (`exact` or `upto`, verified on chain), a seller ledger row it
 * verified on chain, and the clock — a known settlement first, so a settled payment never turns `expired`.
 *
 * Defends: another account's payments being read — the caller passes the account its bearer resolves to and
 * every query is filtered by it (./store/pg-wallet-history-store.ts; a wallet of another account is `wallet_not_found` before any row is read);
 * a seller's unverified word becoming a payment's transaction (only `verified` ledger rows naming this
 * authorization, its payer and network count). Does not defend: the account-wide page sorts that account's
 * authorizations (index (wallet_id, created_at) per wallet), so its cost grows with the account's history.
 */
import { formatUsd } from '../../../policy/money.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import type { PaymentPage, PaymentView } from '../../shared/api-responses/payment-history-responses.js';
import type { PaymentRow, PaymentRowPage, WalletHistoryStore } from './store/wallet-history-store.js';

export class PaymentHistoryService {
  constructor(
    private readonly store: Pick<WalletHistoryStore, 'paymentsOfWallet' | 'paymentsOfAccount'>,
    private readonly clock: () => Date,
  ) {}

  /** One wallet's payments; the caller has checked the wallet belongs to the bearer's account. */
  async forWallet(walletId: string, page: PageRequest): Promise<PaymentPage> {
    return this.view(await this.store.paymentsOfWallet(walletId, page));
  }

  /** The payments of every wallet (active or not) of a Treasury account. */
  async forAccount(accountId: string, page: PageRequest): Promise<PaymentPage> {
    return this.view(await this.store.paymentsOfAccount(accountId, page));
  }

  private view({ page, nextCursor }: PaymentRowPage): PaymentPage {
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
