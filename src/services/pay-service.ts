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
import { policyWindows, velocityWindowStart } from '../../policy/policy-windows.js';
import { appendAuditEvent } from '../audit/audit-ledger.js';
import { canonicalJson } from '../audit/canonical-json.js';
import { generateId } from '../auth/token-codec.js';
import type { ChainInfo, ChainRegistry } from '../chain/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { PaymentRequirements } from '../http/schemas/pay-schemas.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from './account-service.js';
import type { SignerGateway } from './signer-gateway.js';
import { lockWallet } from './wallet-lock.js';
import type { WalletRow, WalletService } from './wallet-service.js';

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
  idempotencyKey: string | undefined;
  /** The route and body, for idempotency comparison. */
  request: unknown;
}

export class PayService {
  constructor(
    private readonly knex: Knex,
    private readonly signer: SignerGateway,
    private readonly accounts: AccountService,
    private readonly wallets: WalletService,
    private readonly chains: ChainRegistry,
    private readonly metrics: TreasuryMetrics,
    private readonly clock: () => Date,
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
    return this.knex.transaction(async (trx) => {
      await lockWallet(trx, walletId);
      const wallet = await this.wallets.getActive(accountId, walletId, trx);
      const state = await this.readState(trx, wallet, now);
      return evaluatePolicy(wallet.policy as WalletPolicy, request, state, now);
    });
  }

  private async readState(trx: Knex.Transaction, wallet: WalletRow, now: Date): Promise<SpendState> {
    const windows = policyWindows(now);
    const rows = (await trx('wallet_spend_totals')
      .where({ wallet_id: wallet.id })
      .andWhere((q) => {
        q.where({ window_kind: 'day', window_start: windows.dayStart })
          .orWhere({ window_kind: 'week', window_start: windows.weekStart })
          .orWhere({ window_kind: 'month', window_start: windows.monthStart });
      })
      .select('window_kind', 'spent_micro')) as Array<{ window_kind: string; spent_micro: string }>;
    const spent = (kind: string) => BigInt(rows.find((r) => r.window_kind === kind)?.spent_micro ?? 0);
    const velocity = (wallet.policy as WalletPolicy).velocity_cap;
    let recentCount = 0;
    if (velocity) {
      const [row] = (await trx('authorizations')
        .where({ wallet_id: wallet.id })
        .andWhere('created_at', '>', velocityWindowStart(velocity.window_seconds, now))
        .count({ n: '*' })) as Array<{ n: string }>;
      recentCount = Number(row?.n ?? 0);
    }
    return {
      dailySpentMicro: spent('day'),
      weeklySpentMicro: spent('week'),
      monthlySpentMicro: spent('month'),
      lastPaymentAt: (wallet as WalletRow & { last_payment_at: Date | null }).last_payment_at ?? null,
      recentCount,
    };
  }

  private requestHash(request: unknown): string {
    return createHash('sha256').update(canonicalJson(request)).digest('hex');
  }

  private async spend(ctx: CallContext, plan: SpendPlan): Promise<SignedPayment> {
    const stop = this.metrics.dbTransactionDuration.startTimer({ operation: plan.kind });
    const requestHash = ctx.idempotencyKey ? this.requestHash(ctx.request) : null;
    const account = await this.accounts.get(ctx.accountId);
    const outcome = await this.knex
      .transaction(async (trx) => {
        await lockWallet(trx, ctx.walletId);
        const wallet = await this.wallets.getActive(ctx.accountId, ctx.walletId, trx);

        if (ctx.idempotencyKey) {
          const previous = await trx('authorizations').where({ wallet_id: wallet.id, idempotency_key: ctx.idempotencyKey }).first('request_hash', 'response');
          if (previous) {
            if (previous.request_hash !== requestHash) throw new AppError('idempotency_key_conflict', { fields: { idempotency_key: ctx.idempotencyKey } });
            return { kind: 'replayed' as const, payment: previous.response as SignedPayment };
          }
        }

        const walletChain = this.chains.resolve(wallet.network);
        if (!walletChain) throw new AppError('network_not_supported', { fields: { network: wallet.network } });
        const chain = plan.chain ?? walletChain;
        if (chain.network !== wallet.network) {
          throw new AppError('network_not_supported', { message: `This wallet is on ${wallet.network}; the payment asks for ${chain.network}.`, fields: { network: chain.network, wallet_network: wallet.network } });
        }

        const now = this.clock();
        const request: SpendRequest = { kind: plan.kind, amountMicro: plan.amountMicro, to: plan.to, capability: plan.capability };
        const state = await this.readState(trx, wallet, now);
        const decision = evaluatePolicy(wallet.policy as WalletPolicy, request, state, now);
        const decisionId = generateId('pd_');
        await trx('policy_decisions').insert({
          id: decisionId,
          wallet_id: wallet.id,
          outcome: decision.allowed ? 'allow' : 'deny',
          kind: plan.kind,
          amount_micro: plan.amountMicro.toString(),
          to_address: plan.to,
          capability: plan.capability ?? null,
          violations: JSON.stringify(decision.violations),
          headroom: JSON.stringify(decision.headroom),
          created_at: now,
        });

        if (!decision.allowed) {
          await appendAuditEvent(trx, {
            chainKey: wallet.id,
            eventType: 'policy.denied',
            actor: ctx.actor,
            payload: { decision_id: decisionId, kind: plan.kind, to: plan.to, amount_usd: formatUsd(plan.amountMicro), capability: plan.capability ?? null, rules: decision.violations.map((v) => v.rule) },
            at: now,
          });
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
        const domain = {
          name: plan.domain?.name ?? chain.usdcName,
          version: plan.domain?.version ?? chain.usdcVersion,
          chainId: chain.chainId,
          verifyingContract: chain.usdc,
        };
        if (!wallet.wallet_key_ref) throw new AppError('wallet_revoked');
        const signed = await this.signer.call('sign_transfer_authorization', {
          account_key_ref: account.account_key_ref,
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
        await trx('authorizations').insert({
          id: authorizationId,
          wallet_id: wallet.id,
          decision_id: decisionId,
          kind: plan.kind,
          network: chain.network,
          asset: chain.usdc,
          from_address: wallet.address,
          to_address: plan.to,
          value_raw: authorization.value,
          amount_micro: plan.amountMicro.toString(),
          valid_after: authorization.validAfter,
          valid_before: authorization.validBefore,
          nonce: authorization.nonce,
          signature: signed.signature,
          capability: plan.capability ?? null,
          resource: plan.resource ?? null,
          idempotency_key: ctx.idempotencyKey ?? null,
          request_hash: requestHash,
          response: JSON.stringify(payment),
          actor: ctx.actor,
          created_at: now,
        });
        const windows = policyWindows(now);
        await trx.raw(
          `INSERT INTO wallet_spend_totals (wallet_id, window_kind, window_start, spent_micro, payment_count)
           VALUES (?, 'day', ?, ?, 1), (?, 'week', ?, ?, 1), (?, 'month', ?, ?, 1)
           ON CONFLICT (wallet_id, window_kind, window_start)
           DO UPDATE SET spent_micro = wallet_spend_totals.spent_micro + EXCLUDED.spent_micro,
                         payment_count = wallet_spend_totals.payment_count + 1`,
          [wallet.id, windows.dayStart, plan.amountMicro.toString(), wallet.id, windows.weekStart, plan.amountMicro.toString(), wallet.id, windows.monthStart, plan.amountMicro.toString()],
        );
        await trx('wallets').where({ id: wallet.id }).update({ last_payment_at: now });
        await appendAuditEvent(trx, {
          chainKey: wallet.id,
          eventType: plan.kind === 'pay' ? 'payment.signed' : 'transfer.signed',
          actor: ctx.actor,
          payload: { authorization_id: authorizationId, decision_id: decisionId, to: plan.to, amount_usd: payment.amount_usd, network: chain.network, nonce: authorization.nonce, capability: plan.capability ?? null, resource: plan.resource ?? null },
          at: now,
        });
        return { kind: 'signed' as const, payment };
      })
      .finally(() => stop());

    if (outcome.kind === 'denied') {
      this.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'deny' });
      const rules = outcome.decision.violations.map((v) => v.rule);
      const failClosed = rules.length === 1 && rules[0] === 'transfer_not_permitted_with_capability_cap';
      throw new AppError(failClosed ? 'transfer_not_permitted_with_capability_cap' : 'policy_denied', {
        message: outcome.decision.violations.map((v) => v.message).join('; '),
        fields: { reason: 'policy_denied', decision_id: outcome.decisionId, rule: rules[0], rules, violations: outcome.decision.violations, headroom: outcome.decision.headroom },
      });
    }
    this.metrics.payDecisions.inc({ kind: plan.kind, outcome: outcome.kind === 'replayed' ? 'replayed' : 'allow' });
    return outcome.payment;
  }
}
