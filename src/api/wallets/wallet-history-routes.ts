/**
 * A wallet's history for the people who answer for it: GET /v1/wallets/{id}/decisions (the newest policy
 * decisions with their `pd_` ids, outcome, amount, recipient and the rules that refused them: denials from
 * policy_decisions, allowed payments from their authorization rows, which carry the same decision id) and
 * GET /v1/wallets/{id}/audit (the newest audit events and the wallet's hash chain recomputed from its first
 * row: verified, or the first broken row and why). Read with the wallet's Treasury bearer, or its agent's PAT
 * or exchanged session, like the policy. A wallet of another account is a 404, a revoked one a 410.
 *
 * Defends: a history shown without the chain's state (the answer says whether the chain holds). Does not:
 * recompute a chain longer than VERIFY_LIMIT_ROWS per request (`not_checked`; `npm run audit:verify` does),
 * nor show audit payloads (event type, actor, time and hashes only).
 */
import Router from '@koa/router';
import { formatUsd } from '../../../policy/money.js';
import { verifyAuditChain } from '../audit/audit-ledger.js';
import { walletIdSchema } from '../http/schemas/common-schemas.js';
import { historyQuerySchema } from './wallet-schemas.js';
import { validate } from '../http/validate.js';
import { walletBearer, type WalletRouteDeps } from './wallet-bearer.js';
import type {
  AuditVerification,
  WalletAudit,
  WalletDecisions,
} from '../../shared/api-responses/wallet-history-responses.js';

/** Longest chain recomputed within a request. */
export const VERIFY_LIMIT_ROWS = 20_000;

export function walletHistoryRoutes(deps: WalletRouteDeps): Router {
  const router = new Router();
  const walletOf = async (ctx: { get(h: string): string; params: Record<string, string> }) => {
    const { accountId } = await walletBearer(deps, ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    return (await deps.wallets.getActive(accountId, walletId)).id;
  };

  router.get('/v1/wallets/:id/decisions', async (ctx) => {
    const walletId = await walletOf(ctx);
    const { limit } = validate(historyQuerySchema, ctx.query, 'query');
    // Denials are policy_decisions rows; an allowed payment's decision is its authorization row (same pd_ id).
    const newest = [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ] as const;
    const [denials, allowed] = await Promise.all([
      deps
        .knex('policy_decisions')
        .where({ wallet_id: walletId })
        .orderBy([...newest])
        .limit(limit),
      deps
        .knex('authorizations')
        .where({ wallet_id: walletId })
        .orderBy([...newest])
        .limit(limit)
        .select('id', 'decision_id', 'kind', 'amount_micro', 'to_address', 'capability', 'created_at'),
    ]);
    // What a refused and an allowed payment both say of the payment itself.
    const payment = (r: {
      kind: WalletDecisions['decisions'][number]['kind'];
      amount_micro: string;
      to_address: string;
      capability: string | null;
    }) => ({
      kind: r.kind,
      amount_usd: formatUsd(BigInt(r.amount_micro)),
      to: r.to_address,
      capability: r.capability ?? null,
    });
    const decisions: WalletDecisions['decisions'] = [
      ...denials.map((r) => ({
        id: r.id as string,
        outcome: 'deny' as const,
        ...payment(r),
        violations: r.violations,
        headroom: r.headroom,
        authorization_id: null,
        created_at: new Date(r.created_at).toISOString(),
      })),
      ...allowed.map((r) => ({
        id: r.decision_id as string,
        outcome: 'allow' as const,
        ...payment(r),
        violations: [],
        headroom: {},
        authorization_id: r.id as string,
        created_at: new Date(r.created_at).toISOString(),
      })),
    ]
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
      .slice(0, limit);
    const body: WalletDecisions = { wallet_id: walletId, decisions };
    ctx.body = body;
  });

  router.get('/v1/wallets/:id/audit', async (ctx) => {
    const walletId = await walletOf(ctx);
    const { limit } = validate(historyQuerySchema, ctx.query, 'query');
    const events = await deps
      .knex('audit_events')
      .where({ chain_key: walletId })
      .orderBy('seq', 'desc')
      .limit(limit)
      .select('seq', 'event_type', 'actor', 'created_at', 'prev_hash', 'hash');
    const length = Number(events[0]?.seq ?? 0);
    let verification: AuditVerification;
    if (length > VERIFY_LIMIT_ROWS) {
      verification = { state: 'not_checked', rows: length };
    } else {
      const checked = await verifyAuditChain(deps.knex, walletId);
      verification = checked.ok
        ? { state: 'verified', rows: checked.rows }
        : {
            state: 'broken',
            rows: checked.rows,
            seq: checked.firstBroken!.seq,
            reason: checked.firstBroken!.reason,
          };
    }
    const body: WalletAudit = {
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
    ctx.body = body;
  });

  return router;
}
