/**
 * The pay path's service: pay, transfer and evaluate, and the answer. The wing reads top to bottom
 * (docs/architecture.md, "The walk of one payment"): ./pay-routes.ts → this service → ./reserve-payment.ts
 * (attempts and retries) → one of ./reserve-in-group-commit.ts, ./reserve-alone.ts, ./reserve-under-pat-lock.ts,
 * each taking a snapshot (./snapshot-cache.ts or ./store/pay-stores.ts), deciding on it with the pure
 * ./decide-payment.ts (which asks policy/) and writing through ./store/ → ./sign-payment.ts (the signer gateway).
 * Nothing below calls back up. A Solana `exact` entry is checked and its transaction message built first
 * (./solana/solana-spend-plan.ts), then walks the same floors; its signed payment carries the wire transaction.
 *
 * Relies on the pay order owned by docs/adr/0006-optimistic-reservations.md (check, reserve, sign, record; or,
 * group-committed, check, sign, record): every decision is written against the audit head it read, and no
 * signature leaves before the row holding it committed. The files named above each keep one step of it.
 *
 * Defends, here: a payment in a scheme, on a network or in an asset this Treasury does not serve, or an `exact`
 * one without its EIP-712 domain; an `upto` payment whose wallet has not approved Permit2 for its signed
 * maximum — 412 `permit2_allowance_required`, nothing recorded — unless the seller's 402 declares
 * `eip2612GasSponsoring` (`gas_sponsoring`), when the permit is signed and audited after the payment
 * (./sign-eip2612-permit.ts); a reservation's signature leaving unrecorded (recorded first; on a signer or
 * record failure the reservation is released, ./release-eventually.ts); a retry with the same Idempotency-Key
 * answered with a second signature (only a reserved row takes one; the stored one is replayed).
 * Does not defend: authorizations signed but never settled, or `upto` ones whose settlement is never reported
 * — they count as spent, at their signed maximum (fail-safe; ./settlement-service.ts gives back the part not
 * charged). Those reserved by a process that died before recording them count too, until a retry with their
 * Idempotency-Key signs them or, once expired, ./expired-reservation-sweeper.ts gives them back. A process that
 * dies between a signature and its write leaves a signature nobody received and no row (docs/adr/0006).
 */
import type { Knex } from 'knex';
import { PERMIT2_ADDRESS } from '@x402/evm';
import { evaluateParsedPolicy } from '../../../policy/evaluate-policy.js';
import { parseUsd } from '../../../policy/money.js';
import type { PolicyDecision, SpendRequest } from '../../../policy/policy-types.js';
import { generateId } from '../auth/token-codec.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainInfo, ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { SignerPolicyDenial } from '../signing/owner-policy-errors.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import { authorizationWindow, uptoFacilitator } from './authorization-terms.js';
import type { PayDeps, PayFaults } from './pay-deps.js';
import type { AuthorizationTerms, PaymentRequirements } from './pay-schemas.js';
import { checkedSnapshot } from './pay-snapshot.js';
import type { CallContext, SpendPlan } from './pay-types.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import { answerSignerDenial } from './record-signer-denial.js';
import { releaseEventually } from './release-eventually.js';
import { prefetchSnapshot } from './prefetch-snapshot.js';
import { requestHash as requestHashOf } from './request-hash.js';
import { reservePayment } from './reserve-payment.js';
import { ChallengeOriginCheck } from './refuse-challenge-origin.js';
import { signEip2612Permit, type Eip2612PermitInfo } from './sign-eip2612-permit.js';
import { signReservation } from './sign-payment.js';
import { SnapshotCache } from './snapshot-cache.js';
import { parsedPolicyOf } from './snapshot-policy.js';
import { ExactMessageBuilder, exactMessageOptions, type SolanaMessageConfig } from './solana/build-exact-message.js';
import { solanaSpendPlan } from './solana/solana-spend-plan.js';
import { PgPaySnapshotStore, PgPayWriteStore } from './store/pg-pay-stores.js';
import type { WalletService } from '../wallets/wallet-service.js';

export type { CallContext } from './pay-types.js';

/** What the pay service is built with (src/api/app.ts). */
export interface PayServiceDeps {
  knex: Knex;
  signer: SignerGateway;
  chains: ChainRegistry;
  metrics: TreasuryMetrics;
  clock: () => Date;
  /** Where recovery answers point (the dashboard's base URL). */
  dashboardUrl: string;
  /** Fault-injection hooks (tests only): after a reservation committed; after a signature was made for a decision not yet written; after a signature was recorded. */
  faults?: PayFaults;
  /** On-chain reads (the Permit2 allowance before an `upto` payment); without it `upto` is refused. */
  chainReader?: Pick<BalanceReader, 'usdcAllowance' | 'usdcPermitNonce'>;
  /**
   * The Solana RPC a Solana payment's message is built with (its blockhash, the mint), its timeout, and how long a
   * blockhash read is reused; Solana chains are served when its URL is set.
   */
  solana?: SolanaMessageConfig | undefined;
  /**
   * Where wallets are made and changed: a new one's snapshot is read ahead of its first payment
   * (./prefetch-snapshot.ts), a changed one's forgotten (its policy, key or status moved).
   */
  wallets?: Pick<WalletService, 'onCreated' | 'onChanged'>;
  /** Bytes of wallet snapshots remembered between payments (TREASURY_PAY_SNAPSHOT_MEMORY_BYTES; ./snapshot-cache.ts). */
  snapshotMemoryBytes?: number;
}

export class PayService {
  private readonly deps: PayDeps;
  private readonly knex: Knex;

  private readonly chains: ChainRegistry;
  private readonly metrics: TreasuryMetrics;
  private readonly clock: () => Date;
  private readonly faults: PayFaults;
  private readonly chainReader: PayServiceDeps['chainReader'];
  private readonly solanaMessages: ExactMessageBuilder | undefined;
  private readonly challengeOrigins: ChallengeOriginCheck;

  constructor(d: PayServiceDeps) {
    const { knex, signer, chains, metrics, clock, dashboardUrl, faults = {}, chainReader } = d;
    const solana = d.solana && exactMessageOptions(d.solana);
    this.solanaMessages = solana
      ? new ExactMessageBuilder({ ...solana, countBlockhash: (source) => metrics.solanaBlockhashes.inc({ source }) })
      : undefined;
    this.chains = chains;
    this.metrics = metrics;
    this.clock = clock;
    this.faults = faults;
    this.chainReader = chainReader;
    this.knex = knex;
    const writes = new PgPayWriteStore(knex, {
      onDecisionBatch: (n) => metrics.decisionWriteBatch.observe(n),
      onRecordBatch: (n) => metrics.signatureRecordBatch.observe(n),
      onConnectionOpened: (writer) => metrics.payConnectionsOpened.inc({ writer }),
      onIsolated: ({ refused, committed }) => {
        metrics.payWriteIsolation.inc({ outcome: 'refused' }, refused);
        metrics.payWriteIsolation.inc({ outcome: 'committed' }, committed);
      },
    });
    d.wallets?.onCreated((walletId) => this.prefetchSnapshot(walletId));
    d.wallets?.onChanged((walletId) => this.forgetWallet(walletId));
    this.deps = {
      snapshots: new PgPaySnapshotStore(knex),
      writes,
      memory: new SnapshotCache({ maxSnapshotBytes: d.snapshotMemoryBytes }),
      signer,
      chains,
      metrics,
      clock,
      mint: { id: generateId, window: authorizationWindow },
      dashboardUrl,
      faults,
    };
    this.challengeOrigins = new ChallengeOriginCheck(knex, this.deps);
  }

  /** Closes the connections of the decision writer and the signature recorder (call after requests drained). */
  async close(): Promise<void> {
    await this.deps.writes.close();
  }

  /**
   * Reads and remembers `walletId`'s snapshot before its first payment (./prefetch-snapshot.ts), in the
   * background: a failure leaves nothing remembered and is only counted.
   */
  prefetchSnapshot(walletId: string): void {
    prefetchSnapshot(this.deps, walletId).catch(() => this.metrics.paySnapshots.inc({ source: 'prefetch_failed' }));
  }

  /** Forgets what this process remembered of `walletId` (its totals and chain moved elsewhere) and of a PAT's day. */
  readonly forgetWallet = (walletId: string, patTokenId?: string): void =>
    this.deps.memory.forgetWallet(walletId, patTokenId);

  /** x402 pay: one `accepts` entry plus an optional capability. */
  async pay(
    ctx: CallContext,
    requirements: PaymentRequirements,
    capability: string | undefined,
    terms?: AuthorizationTerms,
    gasSponsoring?: 'eip2612',
  ): Promise<PaymentAuthorization & { eip2612_permit?: Eip2612PermitInfo }> {
    await this.challengeOrigins.refuseForeign(ctx, requirements, capability);
    const anyChain = this.chains.resolveAny(requirements.network);
    if (anyChain?.family === 'svm' && this.solanaMessages) {
      const messages = this.solanaMessages;
      const plan = await solanaSpendPlan({ snapshots: this.deps.snapshots, messages }, ctx, anyChain, {
        requirements,
        capability,
        terms,
      });
      return this.spend(ctx, plan);
    }
    const scheme = requirements.scheme;
    if (scheme !== 'exact' && (scheme !== 'upto' || !this.chainReader)) {
      throw new AppError('scheme_not_supported', {
        fields: { scheme, supported_schemes: this.chainReader ? ['exact', 'upto'] : ['exact'] },
      });
    }
    const chain = this.chains.resolve(requirements.network);
    if (!chain)
      throw new AppError('network_not_supported', {
        fields: { network: requirements.network, supported: this.chains.all.map((c) => c.network) },
      });
    if (requirements.asset.toLowerCase() !== chain.usdc.toLowerCase()) {
      throw new AppError('asset_not_supported', {
        fields: { asset: requirements.asset, expected: chain.usdc, network: chain.network },
      });
    }
    const name = requirements.extra?.name;
    const version = requirements.extra?.version;
    let facilitator: string | undefined;
    let permitNonce: bigint | undefined;
    if (scheme === 'upto') {
      facilitator = uptoFacilitator(requirements);
      permitNonce = await this.checkPermit2Allowance(ctx, chain, BigInt(requirements.amount), gasSponsoring);
    } else if (typeof name !== 'string' || typeof version !== 'string') throw new AppError('missing_eip712_domain');
    const payment = await this.spend(ctx, {
      kind: 'pay',
      scheme,
      facilitator,
      chain,
      domain: typeof name === 'string' && typeof version === 'string' ? { name, version } : undefined,
      to: requirements.payTo,
      amountMicro: BigInt(requirements.amount),
      capability,
      resource: requirements.resource,
      validForSeconds: requirements.maxTimeoutSeconds,
      terms,
    });
    if (permitNonce === undefined) return payment;
    // The payment is decided, signed and recorded; its permit is signed and audited before either leaves.
    const permit = await signEip2612Permit(
      { knex: this.knex, signer: this.deps.signer, clock: this.clock },
      ctx,
      chain,
      payment,
      permitNonce,
    );
    // The permit's audit row moved the wallet's chain head: what this process remembered of it is stale.
    this.forgetWallet(ctx.walletId);
    this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'eip2612_permit' });
    return { ...payment, eip2612_permit: permit };
  }

  /** External transfer: recipient and USD amount; network and token from the wallet's chain; no capability. */
  async transfer(
    ctx: CallContext,
    body: { to: string; amount_usd: string; valid_for_seconds?: number | undefined },
  ): Promise<PaymentAuthorization> {
    return this.spend(ctx, {
      kind: 'transfer',
      scheme: 'exact',
      chain: undefined,
      domain: undefined,
      to: body.to,
      amountMicro: parseUsd(body.amount_usd),
      capability: undefined,
      resource: undefined,
      validForSeconds: body.valid_for_seconds ?? 3600,
    });
  }

  /**
   * Dry run: what a payment would get now. Signs nothing and records nothing, and takes no lock: the
   * snapshot is one statement, so PostgreSQL reads it from one consistent view of what has committed. It
   * neither waits for the wallet's exclusive lock nor queues in the wallet's per-process line, so evaluate
   * calls (however many) never delay a payment, and a payment in flight never delays evaluate. The answer
   * may miss a payment that commits a moment later — as it would had evaluate arrived a moment earlier; a
   * payment is always decided again on its own, so nothing is allowed on the strength of a dry run.
   */
  async evaluate(accountId: string, walletId: string, request: SpendRequest): Promise<PolicyDecision> {
    const now = this.clock();
    const snapshot = checkedSnapshot(
      await this.deps.snapshots.read(walletId, now, undefined, 'evaluate'),
      accountId,
      walletId,
    );
    return evaluateParsedPolicy(parsedPolicyOf(snapshot.wallet.policy), request, snapshot.state, now);
  }

  /**
   * An `upto` payment can only settle if the wallet let Permit2 move at least the signed maximum: read the
   * allowance before anything is reserved (no lock held; the wallet's address is read without one). Not
   * enough → 412 `permit2_allowance_required` (naming the one-time approval and the `eip2612GasSponsoring`
   * way out), unless the seller advertised that extension (`gasSponsoring`): then the token's EIP-2612 nonce
   * of the wallet, read now (before anything is reserved), and the payment is paid with a permit
   * (./sign-eip2612-permit.ts). Enough allowance: undefined. An unreachable RPC → 503 `chain_unavailable`.
   */
  private async checkPermit2Allowance(
    ctx: CallContext,
    chain: ChainInfo,
    amount: bigint,
    gasSponsoring: 'eip2612' | undefined,
  ): Promise<bigint | undefined> {
    const wallet = await this.deps.snapshots.walletAddress(ctx.walletId);
    if (!wallet || wallet.account_id !== ctx.accountId) throw new AppError('wallet_not_found');
    const owner = wallet.address as `0x${string}`;
    let allowance: bigint;
    try {
      allowance = await this.chainReader!.usdcAllowance(ctx.accountId, chain, owner, PERMIT2_ADDRESS);
    } catch (err) {
      this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'unavailable' });
      throw err;
    }
    if (allowance >= amount) {
      this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'sufficient' });
      return undefined;
    }
    this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'insufficient' });
    if (gasSponsoring === 'eip2612') return this.chainReader!.usdcPermitNonce(ctx.accountId, chain, owner);
    throw new AppError('permit2_allowance_required', {
      fields: {
        owner,
        token: chain.usdc,
        spender: PERMIT2_ADDRESS,
        network: chain.network,
        allowance_raw: allowance.toString(),
        required_raw: amount.toString(),
        // What to do: one on-chain approve(Permit2) from the wallet, or a seller whose 402 advertises
        // `eip2612GasSponsoring` (the buyer SDK then sends gas_sponsoring and Treasury signs the permit).
        required_action: 'approve_permit2',
        approval: { token: chain.usdc, spender: PERMIT2_ADDRESS, min_amount_raw: amount.toString() },
        gas_sponsoring_supported: ['eip2612'],
      },
    });
  }

  /**
   * Decide, sign and record; a refusal of the signer's own copy of the wallet's owner-signed policy (after its
   * reservation was given back) is recorded and answered as a denial (./record-signer-denial.ts).
   */
  private async spend(ctx: CallContext, plan: SpendPlan): Promise<PaymentAuthorization> {
    try {
      return await this.decideAndSign(ctx, plan);
    } catch (err) {
      if (err instanceof SignerPolicyDenial) return answerSignerDenial(this.deps, ctx, plan, err);
      throw err;
    }
  }

  /** Reserve (./reserve-payment.ts), then answer: 403 for a denial, the stored payment for a replay, or sign and record what was reserved. */
  private async decideAndSign(ctx: CallContext, plan: SpendPlan): Promise<PaymentAuthorization> {
    const requestHash = ctx.idempotencyKey ? requestHashOf(ctx.request, ctx.bodyText) : null;
    const stopReserve = once(this.metrics.dbTransactionDuration.startTimer({ operation: plan.kind }));
    const outcome = await reservePayment(this.deps, ctx, plan, requestHash, stopReserve).finally(stopReserve);

    if (outcome.kind === 'denied') {
      this.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'deny' });
      const rules = outcome.decision.violations.map((v) => v.rule);
      // A transfer on a capability-capped wallet answers its own code, whatever else it broke (docs/api.md, Policy).
      const failClosed = rules.includes('transfer_not_permitted_with_capability_cap');
      throw new AppError(failClosed ? 'transfer_not_permitted_with_capability_cap' : 'policy_denied', {
        message: outcome.decision.violations.map((v) => v.message).join('; '),
        fields: {
          reason: 'policy_denied',
          decision_id: outcome.decisionId,
          rule: rules[0],
          rules,
          violations: outcome.decision.violations,
          headroom: outcome.decision.headroom,
        },
      });
    }
    if (outcome.kind === 'replayed') {
      this.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'replayed' });
      return outcome.payment;
    }
    if (outcome.kind === 'signed') {
      // Signed before its write, which committed with the signature in it.
      this.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'allow' });
      this.faults.afterCommit?.();
      return outcome.payment;
    }

    if (outcome.fresh) this.faults.afterReserve?.();
    // The lock is released: the signer call (the slow part under load) no longer serialises a hot wallet.
    let signed: Awaited<ReturnType<typeof signReservation>>;
    try {
      signed = await signReservation(this.deps.signer, outcome);
    } catch (err) {
      // Nobody holds a signature for this reservation: give the spend back (a resumed one stays reserved).
      if (outcome.fresh) await releaseEventually(this.deps, ctx, outcome, 'signer_failed');
      throw err;
    }

    // Record the signature before it leaves. Only a reserved row takes it, so two concurrent retries of one
    // Idempotency-Key both answer with the single signature that was recorded.
    const { signature, payment } = signed;
    const stopRecord = this.metrics.dbTransactionDuration.startTimer({ operation: `${plan.kind}_record` });
    const row = await this.deps.writes
      .record(payment.authorization_id, signature, payment, this.clock())
      .finally(() => stopRecord())
      .catch(async (err: unknown) => {
        // Not recorded, so the signature never leaves: give the spend back. A record that committed after all
        // (its answer lost with the connection) keeps its row signed; only a row still reserved is released.
        if (outcome.fresh) await releaseEventually(this.deps, ctx, outcome, 'record_failed');
        throw err;
      });
    if (!row || row.status !== 'signed' || !row.response.signature) {
      throw new AppError('internal_error', {
        message: 'The authorization was released before its signature could be recorded.',
      });
    }
    this.metrics.payDecisions.inc({ kind: plan.kind, outcome: outcome.fresh ? 'allow' : 'resumed' });
    this.faults.afterCommit?.();
    return row.response;
  }
}

/** `fn` on its first call only (a timer that two paths may stop). */
function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
