/**
 * A wallet's history for the people who answer for it (./wallet-history-routes.ts): its newest policy
 * decisions (denials from policy_decisions, allowed payments from their authorization rows, which carry the
 * same decision id), merged newest first; and its newest audit events with the wallet's hash chain checked:
 * verified, or the first broken row and why.
 *
 * The chain is recomputed from its first row the first time this process is asked for it; the newest row that
 * held is then remembered per wallet (a bounded LRU of REMEMBERED_WALLETS, each entry kept REMEMBER_MS), and
 * later requests recompute from that row on: its hash is recomputed from its contents (its link included) and
 * held to the remembered hash, then every row after it (../audit/verify-audit-since.ts). A remembered point
 * means: every row up to it was recomputed and held by this process, within the last REMEMBER_MS. At most one
 * verification from a chain's first row runs at a time in this process; the others wait their turn (and then
 * start from what the one before them remembered, for the same wallet), served round-robin per tenant
 * (base/fair-queue.ts; the tenant: ../auth/wallet-tenant.ts). One that waited VERIFY_MAX_WAIT_MS without starting is
 * answered `not_checked` (asking again later verifies it).
 *
 * Defends: a history shown without the chain's state (the answer says whether the chain holds); any edit,
 * since it was remembered, to the remembered row or a later one, and the chain cut short below it (`broken`,
 * `anchor_missing`); a tenant's long chain costing every request its whole length (a tenant that writes 20,000
 * refusals and asks for its audit in a loop made another tenant's reads a thousand times slower); a tenant
 * asking for many wallets' audits at once delaying another tenant's first request by more than the verification
 * running and one of each other tenant waiting ahead of it; anyone waiting more than VERIFY_MAX_WAIT_MS (many
 * tenants with work waiting each still get their turn: past the wait, `not_checked`). Does not:
 * catch, before its remembered point expires, an edit to a row before the remembered one that leaves the
 * remembered row alone (`npm run audit:verify` does: the runbook's full verification; the next request after
 * expiry does too); recompute a chain longer than VERIFY_LIMIT_ROWS per request (`not_checked`; `npm run
 * audit:verify` does), nor show audit payloads (event type, actor, time and hashes only), nor check whose
 * wallet it is (the route does, before asking).
 */
import { LRUCache } from 'lru-cache';
import { formatUsd } from '../../../policy/money.js';
import type {
  AuditVerification,
  WalletAudit,
  WalletDecisions,
} from '../../shared/api-responses/wallet-history-responses.js';
import type { AuditHead } from '../audit/audit-ledger.js';
import type { DecidedPayment, WalletHistoryStore } from './store/wallet-history-store.js';
import { FairQueue } from '../../../base/fair-queue.js';

/** Longest chain recomputed within a request. */
export const VERIFY_LIMIT_ROWS = 20_000;

/** Wallets whose newest verified row is remembered (about 200 bytes each). */
export const REMEMBERED_WALLETS = 10_000;

/** How long a remembered row stands for the rows before it: the chain is then recomputed from its start again. */
export const REMEMBER_MS = 60 * 60_000;

/** How long a request waits for its turn at a verification from the chain's first row before `not_checked`. */
export const VERIFY_MAX_WAIT_MS = 10_000;

/** What a refused and an allowed payment both say of the payment itself. */
const payment = (r: DecidedPayment) => ({
  kind: r.kind,
  amount_usd: formatUsd(BigInt(r.amount_micro)),
  to: r.to_address,
  capability: r.capability ?? null,
});

export class WalletHistoryService {
  /** Per wallet, the newest row this process recomputed from the chain's start (directly or through earlier points). */
  private readonly verifiedHeads: LRUCache<string, AuditHead>;
  /** The verifications from a chain's first row: one at a time, round-robin per tenant. */
  private readonly fullVerifications: FairQueue;

  constructor(
    private readonly store: Pick<WalletHistoryStore, 'newestDecisions' | 'newestAuditEvents' | 'verifyChain'>,
    options: { rememberedWallets?: number; rememberMs?: number; maxWaitMs?: number } = {},
  ) {
    this.verifiedHeads = new LRUCache<string, AuditHead>({
      max: options.rememberedWallets ?? REMEMBERED_WALLETS,
      ttl: options.rememberMs ?? REMEMBER_MS,
    });
    this.fullVerifications = new FairQueue({ maxWaitMs: options.maxWaitMs ?? VERIFY_MAX_WAIT_MS });
  }

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

  /**
   * The wallet's newest `limit` audit events and whether its chain holds; a verification from the chain's first
   * row waits for `tenant`'s turn (../auth/wallet-tenant.ts).
   */
  async audit(walletId: string, limit: number, tenant: string): Promise<WalletAudit> {
    const events = await this.store.newestAuditEvents(walletId, limit);
    const length = Number(events[0]?.seq ?? 0);
    let verification: AuditVerification;
    if (length > VERIFY_LIMIT_ROWS) {
      verification = { state: 'not_checked', rows: length };
    } else {
      verification = (await this.verifyChain(walletId, tenant)) ?? { state: 'not_checked', rows: length };
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

  /**
   * The chain from its remembered row on, or (one at a time, in `tenant`'s turn) from its first row: undefined
   * when that turn did not come within the wait. The turn starts from what was remembered meanwhile.
   */
  private async verifyChain(walletId: string, tenant: string): Promise<AuditVerification | undefined> {
    const since = this.verifiedHeads.get(walletId);
    if (since) return this.verifyFrom(walletId, since);
    const turn = await this.fullVerifications.run(tenant, () =>
      this.verifyFrom(walletId, this.verifiedHeads.get(walletId)),
    );
    return turn.ran ? turn.value : undefined;
  }

  private async verifyFrom(walletId: string, since: AuditHead | undefined): Promise<AuditVerification> {
    const { verification: checked, head } = await this.store.verifyChain(walletId, since);
    // The rows before the remembered one were recomputed earlier: the answer counts the whole chain.
    const rows = (since ? Number(since.seq) - 1 : 0) + checked.rows;
    if (checked.ok) {
      if (head) this.verifiedHeads.set(walletId, head);
      return { state: 'verified', rows };
    }
    // A broken chain leaves the remembered row as it was: the next request reads from it again.
    return { state: 'broken', rows, seq: checked.firstBroken!.seq, reason: checked.firstBroken!.reason };
  }
}
