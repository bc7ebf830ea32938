/**
 * The pay path (DESIGN §4): check, reserve, record, then sign — in one transaction under the per-wallet
 * advisory lock. Deny: a `pd_…` decision row and an audit row are committed, then 403. Allow: the signer
 * signs, the authorization (EIP-3009 nonce UNIQUE per sender), the spend totals, the decision and the
 * audit row are written, and only after COMMIT does the signature leave.
 *
 * Defends: races between concurrent payments of one wallet (serialised by the lock, across replicas);
 * double spend on retries (Idempotency-Key: same key and body returns the stored result, another body 409);
 * a signature released without its record (a failed commit discards the signature).
 * Does not defend: authorizations signed but never settled — they count as spent (fail-safe) until a
 * reconciler releases expired ones.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { evaluatePolicy } from '../../policy/evaluate-policy.js';
import { formatUsd, parseUsd } from '../../policy/money.js';
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { PolicyDecision, SpendRequest, SpendState } from '../../policy/policy-types.js';
import { policyWindows } from '../../policy/policy-windows.js';
import { buildAuditRow, type AuditHead } from '../audit/audit-ledger.js';
import { canonicalJson } from '../audit/canonical-json.js';
import { generateId } from '../auth/token-codec.js';
import type { ChainInfo, ChainRegistry } from '../chain/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { PaymentRequirements } from '../http/schemas/pay-schemas.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { SignerGateway } from './signer-gateway.js';
import { withWalletTransaction, type WalletTx } from '../db/wallet-transaction.js';
import type { WalletRow } from './wallet-service.js';

/** A UTC calendar date as YYYY-MM-DD (window starts are always 00:00 UTC). */
function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Signed authorizations start this far in the past, to tolerate clock skew between us and the chain. */
const VALID_AFTER_SKEW_SECONDS = 600;

export interface SignedPayment {
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: string;
  authorization_id: string;
  decision_id: string;
  wallet_id: string;
  network: string;
  asset: string;
  amount_usd: string;
  headroom: PolicyDecision['headroom'];
}

interface SpendPlan {
  kind: 'pay' | 'transfer';
  /** The chain the payment asks for; a transfer uses the wallet's own. */
  chain: ChainInfo | undefined;
  /** The token's EIP-712 domain from the challenge; a transfer uses the chain's configured USDC domain. */
  domain: { name: string; version: string } | undefined;
  to: string;
  amountMicro: bigint;
  capability: string | undefined;
  resource: string | undefined;
  validForSeconds: number;
}

export interface CallContext {
  accountId: string;
  walletId: string;
  actor: string;
  /** When the bearer is a buyer (agent) PAT: its id and daily cap, enforced in the same transaction. */
  pat?: { tokenId: string; dailyCapMicro: bigint | null } | undefined;
  idempotencyKey: string | undefined;
  /** The route and body, for idempotency comparison. */
  request: unknown;
}

export class PayService {
  constructor(
    private readonly knex: Knex,
    private readonly signer: SignerGateway,
    private readonly chains: ChainRegistry,
    private readonly metrics: TreasuryMetrics,
    private readonly clock: () => Date,
    private readonly dashboardUrl: string,
    /** Called after a signed payment committed and before it is returned (fault-injection tests only). */
    private readonly afterCommit?: () => void,
  ) {}

  /** x402 pay: one `accepts` entry plus an optional capability. */
  async pay(ctx: CallContext, requirements: PaymentRequirements, capability: string | undefined): Promise<SignedPayment> {
    if (requirements.scheme !== 'exact') {
      throw new AppError('scheme_not_supported', { fields: { scheme: requirements.scheme, supported_schemes: ['exact'] } });
    }
    const chain = this.chains.resolve(requirements.network);
    if (!chain) throw new AppError('network_not_supported', { fields: { network: requirements.network, supported: this.chains.chains.map((c) => c.network) } });
    if (requirements.asset.toLowerCase() !== chain.usdc.toLowerCase()) {
      throw new AppError('asset_not_supported', { fields: { asset: requirements.asset, expected: chain.usdc, network: chain.network } });
    }
    const name = requirements.extra?.name;
    const version = requirements.extra?.version;
    if (typeof name !== 'string' || typeof version !== 'string') throw new AppError('missing_eip712_domain');
    return this.spend(ctx, {
      kind: 'pay',
      chain,
      domain: { name, version },
      to: requirements.payTo,
      amountMicro: BigInt(requirements.amount),
      capability,
      resource: requirements.resource,
      validForSeconds: requirements.maxTimeoutSeconds,
    });
  }

  /** External transfer: recipient and USD amount; network and token from the wallet's chain; no capability. */
  async transfer(ctx: CallContext, body: { to: string; amount_usd: string; valid_for_seconds?: number | undefined }): Promise<SignedPayment> {
    return this.spend(ctx, {
      kind: 'transfer',
      chain: undefined,
      domain: undefined,
      to: body.to,
      amountMicro: parseUsd(body.amount_usd),
      capability: undefined,
      resource: undefined,
      validForSeconds: body.valid_for_seconds ?? 3600,
    });
  }

  /** Dry run: what a payment would get now. Signs nothing and records nothing. */
  async evaluate(accountId: string, walletId: string, request: SpendRequest): Promise<PolicyDecision> {
    const now = this.clock();
    return withWalletTransaction(this.knex, walletId, async (tx) => {
      const snapshot = await this.readSnapshot(tx, accountId, walletId, now, undefined);
      return evaluatePolicy(snapshot.wallet.policy as WalletPolicy, request, snapshot.state, now);
    });
  }

  /**
   * Everything the decision needs, in one round trip under the wallet lock: the wallet and its account key
   * reference, this UTC day/week/month's running totals, the count inside the velocity window, the audit
   * chain head, and any earlier result for the Idempotency-Key. 404 / 410 as `WalletService.getActive`.
   */
  private async readSnapshot(tx: WalletTx, accountId: string, walletId: string, now: Date, idempotencyKey: string | undefined) {
    const windows = policyWindows(now);
    const rows = await tx.query(
      `SELECT w.*, a.account_key_ref,
              (SELECT json_object_agg(t.window_kind, t.spent_micro::text) FROM wallet_spend_totals t
                WHERE t.wallet_id = w.id AND ((t.window_kind = 'day' AND t.window_start = ?::date)
                   OR (t.window_kind = 'week' AND t.window_start = ?::date) OR (t.window_kind = 'month' AND t.window_start = ?::date))) AS totals,
              CASE WHEN jsonb_exists(w.policy, 'velocity_cap') THEN
                (SELECT count(*) FROM authorizations x WHERE x.wallet_id = w.id
                   AND x.created_at > ?::timestamptz - make_interval(secs => (w.policy->'velocity_cap'->>'window_seconds')::int))
              ELSE 0 END AS recent_count,
              (SELECT json_build_object('seq', e.seq, 'hash', e.hash) FROM audit_events e WHERE e.chain_key = w.id ORDER BY e.seq DESC LIMIT 1) AS audit_head,
              (SELECT json_build_object('request_hash', i.request_hash, 'response', i.response) FROM authorizations i
                WHERE i.wallet_id = w.id AND i.idempotency_key = ?) AS previous
         FROM wallets w JOIN treasury_accounts a ON a.id = w.account_id
        WHERE w.id = ?`,
      [isoDate(windows.dayStart), isoDate(windows.weekStart), isoDate(windows.monthStart), now, idempotencyKey ?? null, walletId],
      'treasury_pay_read_v1',
    );
    const row = rows[0] as
      | (WalletRow & { account_key_ref: string; last_payment_at: Date | null; totals: Record<string, string> | null; recent_count: string; audit_head: AuditHead | null; previous: { request_hash: string; response: SignedPayment } | null })
      | undefined;
    if (!row || row.account_id !== accountId) throw new AppError('wallet_not_found');
    if (row.status === 'revoked') throw new AppError('wallet_revoked', { fields: { wallet_id: walletId, revoked_at: row.revoked_at?.toISOString() ?? null } });
    const state: SpendState = {
      dailySpentMicro: BigInt(row.totals?.day ?? 0),
      weeklySpentMicro: BigInt(row.totals?.week ?? 0),
      monthlySpentMicro: BigInt(row.totals?.month ?? 0),
      lastPaymentAt: row.last_payment_at,
      recentCount: Number(row.recent_count),
    };
    return { wallet: row, state, auditHead: row.audit_head, previous: row.previous, windows };
  }

  /**
   * The buyer PAT's daily cap (UTC day), checked under a per-PAT lock taken after the wallet lock (always
   * in that order, so two wallets paid through one PAT cannot deadlock). Over the cap: 429 MGMT_6014 with
   * the raise_pat_cap recovery; nothing is recorded.
   */
  private async checkPatDailyCap(tx: WalletTx, pat: { tokenId: string; dailyCapMicro: bigint | null }, amountMicro: bigint, dayStart: Date): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended(?, 13))', [`pat:${pat.tokenId}`], 'treasury_pat_lock_v1');
    if (pat.dailyCapMicro === null) return;
    const [row] = await tx.query<{ spent_micro: string }>('SELECT spent_micro FROM pat_spend_totals WHERE token_id = ? AND day = ?::date', [pat.tokenId, isoDate(dayStart)], 'treasury_pat_read_v1');
    const spent = BigInt(row?.spent_micro ?? 0);
    if (spent + amountMicro <= pat.dailyCapMicro) return;
    this.metrics.payDecisions.inc({ kind: 'pay', outcome: 'pat_cap' });
    throw new AppError('MGMT_6014', {
      recovery: {
        kind: 'raise_pat_cap',
        settings_url: `${this.dashboardUrl}/settings/pats/${pat.tokenId}`,
        current_cap_usd: formatUsd(pat.dailyCapMicro),
        attempted_amount_usd: formatUsd(amountMicro),
      },
      fields: { spent_today_usd: formatUsd(spent) },
    });
  }

  private requestHash(request: unknown): string {
    return createHash('sha256').update(canonicalJson(request)).digest('hex');
  }

  private async spend(ctx: CallContext, plan: SpendPlan): Promise<SignedPayment> {
    const stop = this.metrics.dbTransactionDuration.startTimer({ operation: plan.kind });
    const requestHash = ctx.idempotencyKey ? this.requestHash(ctx.request) : null;
    const outcome = await withWalletTransaction(this.knex, ctx.walletId, async (tx) => {
        const now = this.clock();
        const { wallet, state, auditHead, previous, windows } = await this.readSnapshot(tx, ctx.accountId, ctx.walletId, now, ctx.idempotencyKey);

        if (previous) {
          if (previous.request_hash !== requestHash) throw new AppError('idempotency_key_conflict', { fields: { idempotency_key: ctx.idempotencyKey } });
          return { kind: 'replayed' as const, payment: previous.response };
        }

        const walletChain = this.chains.resolve(wallet.network);
        if (!walletChain) throw new AppError('network_not_supported', { fields: { network: wallet.network } });
        const chain = plan.chain ?? walletChain;
        if (chain.network !== wallet.network) {
          throw new AppError('network_not_supported', { message: `This wallet is on ${wallet.network}; the payment asks for ${chain.network}.`, fields: { network: chain.network, wallet_network: wallet.network } });
        }

        if (ctx.pat) await this.checkPatDailyCap(tx, ctx.pat, plan.amountMicro, windows.dayStart);

        const request: SpendRequest = { kind: plan.kind, amountMicro: plan.amountMicro, to: plan.to, capability: plan.capability };
        const decision = evaluatePolicy(wallet.policy as WalletPolicy, request, state, now);
        const decisionId = generateId('pd_');
        const decisionRow = [decisionId, wallet.id, decision.allowed ? 'allow' : 'deny', plan.kind, plan.amountMicro.toString(), plan.to, plan.capability ?? null, JSON.stringify(decision.violations), JSON.stringify(decision.headroom), now];
        const insertDecision = `INSERT INTO policy_decisions (id, wallet_id, outcome, kind, amount_micro, to_address, capability, violations, headroom, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
        const insertAudit = `INSERT INTO audit_events (chain_key, seq, event_type, actor, payload, prev_hash, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
        const auditValues = (r: ReturnType<typeof buildAuditRow>) => [r.chain_key, r.seq, r.event_type, r.actor, r.payload, r.prev_hash, r.hash, r.created_at];

        if (!decision.allowed) {
          const audit = buildAuditRow(auditHead, {
            chainKey: wallet.id,
            eventType: 'policy.denied',
            actor: ctx.actor,
            payload: { decision_id: decisionId, kind: plan.kind, to: plan.to, amount_usd: formatUsd(plan.amountMicro), capability: plan.capability ?? null, rules: decision.violations.map((v) => v.rule) },
            at: now,
          });
          await tx.query(`WITH d AS (${insertDecision}) ${insertAudit}`, [...decisionRow, ...auditValues(audit)], 'treasury_pay_deny_v1');
          return { kind: 'denied' as const, decisionId, decision };
        }

        const wallNow = Math.floor(Date.now() / 1000);
        const authorization = {
          from: wallet.address,
          to: plan.to,
          value: plan.amountMicro.toString(),
          validAfter: String(wallNow - VALID_AFTER_SKEW_SECONDS),
          validBefore: String(wallNow + plan.validForSeconds),
          nonce: `0x${randomBytes(32).toString('hex')}`,
        };
        const domain = { name: plan.domain?.name ?? chain.usdcName, version: plan.domain?.version ?? chain.usdcVersion, chainId: chain.chainId, verifyingContract: chain.usdc };
        if (!wallet.wallet_key_ref) throw new AppError('wallet_revoked');
        const signed = await this.signer.call('sign_transfer_authorization', {
          account_key_ref: wallet.account_key_ref,
          wallet_key_ref: wallet.wallet_key_ref,
          address: wallet.address,
          domain,
          message: authorization,
        });
        const authorizationId = generateId('auth_');
        const payment: SignedPayment = {
          authorization,
          signature: signed.signature,
          authorization_id: authorizationId,
          decision_id: decisionId,
          wallet_id: wallet.id,
          network: chain.network,
          asset: chain.usdc,
          amount_usd: formatUsd(plan.amountMicro),
          headroom: decision.headroom,
        };
        const audit = buildAuditRow(auditHead, {
          chainKey: wallet.id,
          eventType: plan.kind === 'pay' ? 'payment.signed' : 'transfer.signed',
          actor: ctx.actor,
          payload: { authorization_id: authorizationId, decision_id: decisionId, to: plan.to, amount_usd: payment.amount_usd, network: chain.network, nonce: authorization.nonce, capability: plan.capability ?? null, resource: plan.resource ?? null },
          at: now,
        });
        const amount = plan.amountMicro.toString();
        // Record everything in one statement (data-modifying CTEs), then COMMIT; only then does the signature leave.
        await tx.query(
          `WITH d AS (${insertDecision}),
                a AS (INSERT INTO authorizations (id, wallet_id, decision_id, kind, network, asset, from_address, to_address, value_raw, amount_micro,
                        valid_after, valid_before, nonce, signature, capability, resource, idempotency_key, request_hash, response, actor, created_at)
                      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)),
                t AS (INSERT INTO wallet_spend_totals (wallet_id, window_kind, window_start, spent_micro, payment_count)
                      VALUES (?, 'day', ?::date, ?, 1), (?, 'week', ?::date, ?, 1), (?, 'month', ?::date, ?, 1)
                      ON CONFLICT (wallet_id, window_kind, window_start)
                      DO UPDATE SET spent_micro = wallet_spend_totals.spent_micro + EXCLUDED.spent_micro,
                                    payment_count = wallet_spend_totals.payment_count + 1),
                w AS (UPDATE wallets SET last_payment_at = ? WHERE id = ?)
           ${insertAudit}`,
          [
            ...decisionRow,
            authorizationId, wallet.id, decisionId, plan.kind, chain.network, chain.usdc, wallet.address, plan.to, authorization.value, amount,
            authorization.validAfter, authorization.validBefore, authorization.nonce, signed.signature, plan.capability ?? null, plan.resource ?? null,
            ctx.idempotencyKey ?? null, requestHash, JSON.stringify(payment), ctx.actor, now,
            wallet.id, isoDate(windows.dayStart), amount, wallet.id, isoDate(windows.weekStart), amount, wallet.id, isoDate(windows.monthStart), amount,
            now, wallet.id,
            ...auditValues(audit),
          ],
          'treasury_pay_record_v1',
        );
        if (ctx.pat) {
          await tx.query(
            `INSERT INTO pat_spend_totals (token_id, day, spent_micro) VALUES (?, ?::date, ?)
             ON CONFLICT (token_id, day) DO UPDATE SET spent_micro = pat_spend_totals.spent_micro + EXCLUDED.spent_micro`,
            [ctx.pat.tokenId, isoDate(windows.dayStart), amount],
            'treasury_pat_spend_v1',
          );
        }
        return { kind: 'signed' as const, payment };
      }).finally(() => stop());

    if (outcome.kind === 'denied') {
      this.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'deny' });
      const rules = outcome.decision.violations.map((v) => v.rule);
      // Spec §7: a transfer on a capability-capped wallet answers its own code, whatever else it broke.
      const failClosed = rules.includes('transfer_not_permitted_with_capability_cap');
      throw new AppError(failClosed ? 'transfer_not_permitted_with_capability_cap' : 'policy_denied', {
        message: outcome.decision.violations.map((v) => v.message).join('; '),
        fields: { reason: 'policy_denied', decision_id: outcome.decisionId, rule: rules[0], rules, violations: outcome.decision.violations, headroom: outcome.decision.headroom },
      });
    }
    this.metrics.payDecisions.inc({ kind: plan.kind, outcome: outcome.kind === 'replayed' ? 'replayed' : 'allow' });
    if (outcome.kind === 'signed') this.afterCommit?.();
    return outcome.payment;
  }
}
