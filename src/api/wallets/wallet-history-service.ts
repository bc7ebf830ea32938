/**
 * A wallet's history for the people who answer for it (./wallet-history-routes.ts): its newest policy
 * decisions (denials from policy_decisions, allowed payments from their authorization rows, which carry the
 * same decision id), merged newest first; and its newest audit events with the wallet's hash chain recomputed
 * from its first row: verified, or the first broken row and why.
 *
 * Defends: a history shown without the chain's state (the answer says whether the chain holds). Does not:
 * recompute a chain longer than VERIFY_LIMIT_ROWS per request (`not_checked`; `npm run audit:verify` does),
 * nor show audit payloads (event type, actor, time and hashes only), nor check whose wallet it is (the route
 * does, before asking).
 */
import { formatUsd } from '../../../policy/money.js';
import type {
  AuditVerification,
  WalletAudit,
  WalletDecisions,
} from '../../shared/api-responses/wallet-history-responses.js';
import type { DecidedPayment, WalletHistoryStore } from './store/wallet-history-store.js';

/** Longest chain recomputed within a request. */
export const VERIFY_LIMIT_ROWS = 20_000;

/** What a refused and an allowed payment both say of the payment itself. */
const payment = (r: DecidedPayment) => ({
  kind: r.kind,
  amount_usd: formatUsd(BigInt(r.amount_micro)),
  to: r.to_address,
  capability: r.capability ?? null,
});

export class WalletHistoryService {
  constructor(
    private readonly store: Pick<WalletHistoryStore, 'newestDecisions' | 'newestAuditEvents' | 'verifyChain'>,
  ) {}

  /** The wallet's newest `limit` decisions, refused and allowed, newest first. */
  async decisions(walletId: string, limit: number): Promise<WalletDecisions> {
    const { denials, allowed } = await this.store.newestDecisions(walletId, limit);
    const decisions: WalletDecisions['decisions'] = [
      ...denials.map((r) => ({
        id: r.id,
        outcome: 'deny' as const,
        ...payment(r),
        violations: r.violations,
        headroom: r.headroom,
        decided_by: r.decided_by,
        authorization_id: null,
        created_at: new Date(r.created_at).toISOString(),
      })),
      ...allowed.map((r) => ({
        id: r.decision_id,
        outcome: 'allow' as const,
        ...payment(r),
        violations: [],
        headroom: {},
        decided_by: null,
        authorization_id: r.id,
        created_at: new Date(r.created_at).toISOString(),
      })),
    ]
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
      .slice(0, limit);
    return { wallet_id: walletId, decisions };
  }

  /** The wallet's newest `limit` audit events and whether its chain holds. */
  async audit(walletId: string, limit: number): Promise<WalletAudit> {
    const events = await this.store.newestAuditEvents(walletId, limit);
    const length = Number(events[0]?.seq ?? 0);
    let verification: AuditVerification;
    if (length > VERIFY_LIMIT_ROWS) {
      verification = { state: 'not_checked', rows: length };
    } else {
      const checked = await this.store.verifyChain(walletId);
      verification = checked.ok
        ? { state: 'verified', rows: checked.rows }
        : {
            state: 'broken',
            rows: checked.rows,
            seq: checked.firstBroken!.seq,
            reason: checked.firstBroken!.reason,
          };
    }
    return {
      wallet_id: walletId,
      events: events.map((e) => ({
        seq: Number(e.seq),
        event_type: e.event_type,
        actor: e.actor,
        created_at: new Date(e.created_at).toISOString(),
        prev_hash: e.prev_hash,
        hash: e.hash,
      })),
      verification,
    };
  }
}
