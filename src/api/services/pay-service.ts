/**
 * The pay path (DESIGN §4, docs/adr/0006): check, sign, record — or check, reserve, sign, record.
 * 1. On a snapshot of the wallet (read, or remembered from the wallet's last write in this process), enforce
 *    the policy and write in one atomic statement either the denial (`pd_…` decision + audit row, then 403)
 *    or the reservation: the authorization with its nonce fixed (UNIQUE per sender and scheme), its
 *    decision id and no signature yet, the spend totals and the audit row at the chain's head + 1 (an
 *    allowed decision is recorded by these two rows; policy_decisions holds denials). That audit
 *    row fails the statement if anything changed the wallet since the snapshot; the decision is then taken
 *    again on a fresh read. The paying buyer PAT's daily total is counted by the same statement. A buyer
 *    PAT with a daily cap (across wallets) takes the same path while its total as this process knows it
 *    leaves room for the payment; the total is written with the cap, and PostgreSQL refuses a total above
 *    it (another process may have counted payments meanwhile), so the statement fails and the payment is
 *    decided again. Otherwise — a PAT not known here, not enough room, or after such a failure — read,
 *    check and write run in one transaction under the exclusive wallet lock and the PAT lock instead.
 * 2. The signer signs that exact message (no lock held, so a hot wallet is not serialised on it).
 * 3. Group-committed decisions (no buyer PAT cap, the usual case) are signed while their write keeps its
 *    place in the writer's queue: the authorization is written already signed, with its spend and audit
 *    row, in one statement — DESIGN §4's order, one statement and one commit per payment. Elsewhere (a
 *    capped buyer PAT's locked transaction, a payment decided again alone, a resumed reservation) the
 *    reservation commits first and one more statement records the signature on the reserved row (several
 *    rows per statement when payments arrive together). Either way the signature leaves only after the row
 *    holding it committed. If the signer fails, the reservation is written unsigned (the wallet's later
 *    decisions may count on its audit row) and released (spend given back, audited).
 *
 * Defends: races between concurrent payments of one wallet, across replicas (every decision is written
 * against the audit head it read; the spend is committed before any signature leaves); double spend on
 * retries (Idempotency-Key: same key and body returns the stored result or signs the same reserved message
 * — never a second nonce; another body 409); a signature released without its record; a buyer PAT's day
 * counted past its cap by payments decided in several processes (CHECK pat_spend_totals_within_cap).
 * x402 `upto` (Permit2 witness transfer to the x402 upto proxy, bound to the facilitator's address) takes the
 * same path: the signed maximum is what is checked against the policy and counted as spent (the seller may
 * settle less; the difference is not given back), and before anything is reserved the wallet's on-chain
 * Permit2 allowance is read — missing or too small → 412 `permit2_allowance_required`, nothing recorded.
 * Does not defend: authorizations signed but never settled — they count as spent (fail-safe). Those reserved
 * by a process that died before recording them count too, until a retry with their Idempotency-Key signs
 * them or, once expired, ./expired-reservation-sweeper.ts gives them back. A process that dies between a
 * signature and its write leaves a signature nobody received and no row: the HSM's log shows a signature
 * the ledger does not (the retry with the same Idempotency-Key is decided and signed anew).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { evaluatePolicy } from '../../../policy/evaluate-policy.js';
import { formatUsd, parseUsd } from '../../../policy/money.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import type { PolicyDecision, SpendRequest, SpendState } from '../../../policy/policy-types.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import { buildAuditRow, type AuditHead } from '../audit/audit-ledger.js';
import { canonicalJson } from '../audit/canonical-json.js';
import { generateId } from '../auth/token-codec.js';
import type { ChainInfo, ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { AuthorizationTerms, PaymentRequirements } from '../http/schemas/pay-schemas.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { SignerGateway } from './signer-gateway.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { runStatement, walletLockKey, withWalletDecision, withWalletSnapshot, withWalletTransaction, type OpeningQuery, type WalletTx } from '../db/wallet-transaction.js';
import { DECISION_WRITE_NAME, DECISION_WRITE_SQL, decisionWriteParams, ReservationBatchAborted, ReservationWriter, signedWrite, type DecisionValues, type DecisionWrite, type WritePlace } from '../db/reservation-writer.js';
import { SignatureRecorder } from '../db/signature-recorder.js';
import { connectionUsableAfter } from '../db/connection-usable-after.js';
import { isDataException } from '../db/is-row-error.js';
import { authorizationWindow, uptoFacilitator } from './authorization-terms.js';
import { auditValues, isoDate, SNAPSHOT_SQL } from './pay-statements.js';
import { releaseReservation, type ReleaseReason } from './release-reservation.js';
import { paymentTerms, type SignedPayment } from './signed-payment.js';
import { addToVelocityWindow, ageVelocityWindow, type VelocityWindow } from './velocity-window.js';
import { LRUCache } from 'lru-cache';
import type { WalletRow } from './wallet-service.js';

/** An earlier attempt with the same Idempotency-Key: signed (replay it) or reserved (sign it now). */
interface PreviousAttempt {
  id: string;
  status: 'reserved' | 'signed';
  request_hash: string;
  response: SignedPayment;
}

/** A reservation committed under the wallet lock, to be signed and recorded after the lock is released. */
interface Reservation {
  kind: 'reserved';
  /** False when an earlier attempt with the same Idempotency-Key reserved it (this request resumes it). */
  fresh: boolean;
  payment: SignedPayment;
  accountKeyRef: string;
  walletKeyRef: string;
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
  windows: ReturnType<typeof policyWindows>;
}

/** The checked snapshot a decision is taken on (PayService.readSnapshot). */
type Snapshot = ReturnType<PayService['readSnapshot']>;

/** A decision taken on a snapshot, before it is written. */
interface Decided {
  outcome: { kind: 'denied'; decisionId: string; decision: PolicyDecision } | { kind: 'replayed'; payment: SignedPayment } | Reservation;
  /** What records it (none for a replay or a resumed reservation). */
  write?: DecisionWrite;
  /** How the snapshot changes once the write committed. */
  change?: { auditHead: AuditHead; spentMicro?: bigint; at: Date };
}

interface SpendPlan {
  kind: 'pay' | 'transfer';
  scheme: 'exact' | 'upto';
  /** upto: the facilitator address the Permit2 witness binds the settlement to. */
  facilitator?: string | undefined;
  /** The chain the payment asks for; a transfer uses the wallet's own. */
  chain: ChainInfo | undefined;
  /** The token's EIP-712 domain from the challenge; a transfer uses the chain's configured USDC domain. */
  domain: { name: string; version: string } | undefined;
  to: string;
  amountMicro: bigint;
  capability: string | undefined;
  resource: string | undefined;
  validForSeconds: number;
  /** Nonce and window proposed by the caller (pay only), checked against validForSeconds. */
  terms?: AuthorizationTerms | undefined;
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
    /** Fault-injection hooks (tests only): after a reservation committed; after a signature was made for a decision not yet written; after a signature was recorded. */
    private readonly faults: { afterReserve?: (() => void) | undefined; afterSign?: (() => void) | undefined; afterCommit?: (() => void) | undefined } = {},
    /** On-chain reads (the Permit2 allowance before an `upto` payment); without it `upto` is refused. */
    private readonly chainReader?: Pick<BalanceReader, 'usdcAllowance'>,
  ) {
    this.recorder = new SignatureRecorder<SignedPayment>(knex, { onBatch: (n) => metrics.signatureRecordBatch.observe(n), onConnectionOpened: () => metrics.payConnectionsOpened.inc({ writer: 'signature_record' }) });
    this.writer = new ReservationWriter(knex, {
      onBatch: (n) => metrics.decisionWriteBatch.observe(n),
      onConnectionOpened: () => metrics.payConnectionsOpened.inc({ writer: 'decision_write' }),
      onIsolated: ({ refused, committed }) => {
        metrics.payWriteIsolation.inc({ outcome: 'refused' }, refused);
        metrics.payWriteIsolation.inc({ outcome: 'committed' }, committed);
      },
    });
  }

  /** Closes the connections of the decision writer and the signature recorder (call after requests drained). */
  async close(): Promise<void> {
    await Promise.all([this.writer.close(), this.recorder.close()]);
  }

  /** Decisions (reservations and denials) are written several to a statement (reservation-writer.ts). */
  private readonly writer: ReservationWriter;

  /** Signatures are recorded several to a statement when payments arrive together (signature-recorder.ts). */
  private readonly recorder: SignatureRecorder<SignedPayment>;

  /**
   * The snapshot row each wallet's last optimistic write leaves behind in this process, keyed by wallet id —
   * set as soon as the write is decided, so it may count writes still queued in the ReservationWriter: the
   * next payment of that wallet decides on it without reading. It is only a guess — the write's audit row at
   * head + 1 fails if anything changed the wallet meanwhile (every change appends to its chain), and the
   * entry is dropped and read afresh; it is also dropped when a shared statement failed, or a write of this
   * wallet was refused for its values (the writer's `generationOf` the wallet), when
   * the UTC window changed, and when its velocity count can no longer be known (./velocity-window.ts). Not
   * used for an Idempotency-Key this process has seen before (the earlier attempt must be looked up).
   */
  private readonly snapshots = new LRUCache<string, { row: Record<string, unknown>; windowKey: string; generation: number }>({ max: 10_000 });

  /**
   * Each capped buyer PAT's total that UTC day as this process knows it — read under the PAT's lock, plus
   * every payment this process decided since — keyed by token id. A payment that fits under the cap on it is
   * decided like one without a cap (group commit, remembered wallet snapshot, no PAT lock): its write carries
   * the cap, and PostgreSQL refuses a total above it (CHECK pat_spend_totals_within_cap) — what payments
   * counted by another process meanwhile can cause; the statement then fails and the payment is decided
   * again under the PAT's lock. A payment that does not fit (the 429 comes from a fresh read), a PAT not
   * known here, an entry from before a failed statement (`generation`) or from another day take the locked
   * path. Only a guess: too high sends payments to the locked path, too low fails a statement.
   */
  private readonly patTotals = new LRUCache<string, { day: string; spentMicro: bigint; generation: number }>({ max: 10_000 });

  /** Whether the remembered total of `pat` this UTC day leaves room for `amountMicro` under its cap. */
  private patRoomRemembered(pat: { tokenId: string; dailyCapMicro: bigint }, amountMicro: bigint, now: Date): boolean {
    const entry = this.patTotals.get(pat.tokenId);
    return !!entry && entry.generation === this.writer.generation && entry.day === isoDate(policyWindows(now).dayStart) && entry.spentMicro + amountMicro <= pat.dailyCapMicro;
  }

  /**
   * Idempotency-Keys this process has seen, as `wallet id|key`. A key's first use (each signature the SDK asks
   * for has a key of its own) decides on the remembered snapshot and is group-committed like a payment
   * without one: a key never used has no earlier attempt to look up, and if it was used after all (through
   * another process, or before this one started) its authorization's UNIQUE (wallet_id, idempotency_key)
   * fails the write, and the payment is decided again on a read that finds the earlier attempt. Any later
   * use of a key seen here reads the wallet first. Evicted keys fall back on that UNIQUE constraint.
   */
  private readonly seenKeys = new LRUCache<string, true>({ max: 100_000 });

  /** True the first time this process sees `key` for `walletId` (and remembers it). */
  private firstUseOfKey(walletId: string, key: string): boolean {
    const id = `${walletId}|${key}`;
    if (this.seenKeys.has(id)) return false;
    this.seenKeys.set(id, true);
    return true;
  }

  /** Forgets what this process remembered of `walletId` (another path changed its totals and audit chain). */
  forgetWallet(walletId: string): void {
    this.snapshots.delete(walletId);
  }

  /** x402 pay: one `accepts` entry plus an optional capability. */
  async pay(ctx: CallContext, requirements: PaymentRequirements, capability: string | undefined, terms?: AuthorizationTerms): Promise<SignedPayment> {
    const scheme = requirements.scheme;
    if (scheme !== 'exact' && (scheme !== 'upto' || !this.chainReader)) {
      throw new AppError('scheme_not_supported', { fields: { scheme, supported_schemes: this.chainReader ? ['exact', 'upto'] : ['exact'] } });
    }
    const chain = this.chains.resolve(requirements.network);
    if (!chain) throw new AppError('network_not_supported', { fields: { network: requirements.network, supported: this.chains.chains.map((c) => c.network) } });
    if (requirements.asset.toLowerCase() !== chain.usdc.toLowerCase()) {
      throw new AppError('asset_not_supported', { fields: { asset: requirements.asset, expected: chain.usdc, network: chain.network } });
    }
    const name = requirements.extra?.name;
    const version = requirements.extra?.version;
    let facilitator: string | undefined;
    if (scheme === 'upto') {
      facilitator = uptoFacilitator(requirements);
      await this.checkPermit2Allowance(ctx, chain, BigInt(requirements.amount));
    } else if (typeof name !== 'string' || typeof version !== 'string') throw new AppError('missing_eip712_domain');
    return this.spend(ctx, {
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
  }

  /** External transfer: recipient and USD amount; network and token from the wallet's chain; no capability. */
  async transfer(ctx: CallContext, body: { to: string; amount_usd: string; valid_for_seconds?: number | undefined }): Promise<SignedPayment> {
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
   * An `upto` payment can only settle if the wallet let Permit2 move at least the signed maximum: read the
   * allowance before anything is reserved (no lock held; the wallet's address is read without one). Not
   * enough → 412 `permit2_allowance_required`; an unreachable RPC → 503 `chain_unavailable`. Nothing recorded.
   */
  private async checkPermit2Allowance(ctx: CallContext, chain: ChainInfo, amount: bigint): Promise<void> {
    const [wallet] = await runStatement<{ address: string; account_id: string }>(this.knex, 'SELECT address, account_id FROM wallets WHERE id = ?', [ctx.walletId], 'treasury_wallet_address_v1');
    if (!wallet || wallet.account_id !== ctx.accountId) throw new AppError('wallet_not_found');
    const owner = wallet.address as `0x${string}`;
    let allowance: bigint;
    try {
      allowance = await this.chainReader!.usdcAllowance(chain, owner, PERMIT2_ADDRESS);
    } catch (err) {
      this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'unavailable' });
      throw err;
    }
    if (allowance >= amount) {
      this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'sufficient' });
      return;
    }
    this.metrics.permit2AllowanceChecks.inc({ network: chain.network, outcome: 'insufficient' });
    throw new AppError('permit2_allowance_required', {
      fields: { owner, token: chain.usdc, spender: PERMIT2_ADDRESS, network: chain.network, allowance_raw: allowance.toString(), required_raw: amount.toString() },
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
    const query = this.snapshotQuery(walletId, now, undefined);
    const rows = await runStatement(this.knex, query.sql, [...query.params], 'treasury_evaluate_snapshot_v1');
    const snapshot = this.readSnapshot(rows, accountId, walletId, now);
    return evaluatePolicy(snapshot.wallet.policy as WalletPolicy, request, snapshot.state, now);
  }

  /**
   * Everything the decision needs, read in the round trip that begins the transaction and takes the wallet
   * lock (after the lock, in the same simple query; parameters quoted by pg's escapeLiteral): the wallet and its account key
   * reference, this UTC day/week/month's running totals, the count inside the velocity window, the audit
   * chain head, and any earlier result for the Idempotency-Key. 404 / 410 as `WalletService.getActive`.
   */
  private snapshotQuery(walletId: string, now: Date, idempotencyKey: string | undefined): OpeningQuery {
    const windows = policyWindows(now);
    return {
      sql: SNAPSHOT_SQL,
      params: [isoDate(windows.dayStart), isoDate(windows.weekStart), isoDate(windows.monthStart), now, idempotencyKey ?? null, walletId],
    };
  }

  /** The snapshot row read under the lock (see SNAPSHOT_SQL), checked: 404 / 410 as `WalletService.getActive`. */
  private readSnapshot(rows: Record<string, unknown>[], accountId: string, walletId: string, now: Date) {
    const windows = policyWindows(now);
    const row = rows[0] as
      | (WalletRow & { account_key_ref: string; last_paid_at: Date | null; totals: Record<string, string> | null; recent: VelocityWindow | null; audit_head: AuditHead | null; previous: PreviousAttempt | null })
      | undefined;
    if (!row || row.account_id !== accountId) throw new AppError('wallet_not_found');
    if (row.status === 'revoked') throw new AppError('wallet_revoked', { fields: { wallet_id: walletId, revoked_at: row.revoked_at?.toISOString() ?? null } });
    const state: SpendState = {
      dailySpentMicro: BigInt(row.totals?.day ?? 0),
      weeklySpentMicro: BigInt(row.totals?.week ?? 0),
      monthlySpentMicro: BigInt(row.totals?.month ?? 0),
      lastPaymentAt: row.last_paid_at,
      recentCount: row.recent?.count ?? 0,
    };
    return { wallet: row, state, auditHead: row.audit_head, previous: row.previous, windows };
  }

  /**
   * The statements that follow the wallet lock and snapshot in the opening round trip of a payment through a
   * buyer PAT with a daily cap: the per-PAT lock (always after the wallet lock, so two wallets paid through
   * one PAT cannot deadlock), then the PAT's total that UTC day, read under it. One round trip instead of
   * three while the PAT's lock — which every payment of that agent waits for — is held.
   */
  private patCapQueries(tokenId: string, dayStart: Date): OpeningQuery['then'] {
    return [
      { sql: 'SELECT pg_advisory_xact_lock(hashtextextended(?, 13))', params: [`pat:${tokenId}`] },
      { sql: 'SELECT spent_micro FROM pat_spend_totals WHERE token_id = ? AND day = ?::date', params: [tokenId, isoDate(dayStart)] },
    ];
  }

  /**
   * The buyer PAT's daily cap (UTC day) against its total read under its lock (patCapQueries). Over the cap:
   * 429 MGMT_6014 with the raise_pat_cap recovery; nothing is recorded. The recovery names human paths
   * only — the dashboard page and the CLI command that signs the owner in again with the seed — as the
   * agent's own PAT (or a session exchanged from it) cannot change a cap.
   */
  private checkPatDailyCap(pat: { tokenId: string; dailyCapMicro: bigint }, spentRows: Record<string, unknown>[] | undefined, amountMicro: bigint): void {
    const spent = BigInt((spentRows?.[0]?.spent_micro as string | undefined) ?? 0);
    if (spent + amountMicro <= pat.dailyCapMicro) return;
    this.metrics.payDecisions.inc({ kind: 'pay', outcome: 'pat_cap' });
    throw new AppError('MGMT_6014', {
      recovery: {
        kind: 'raise_pat_cap',
        settings_url: `${this.dashboardUrl}/settings/pats/${pat.tokenId}`,
        cli_command: `xx pat update ${pat.tokenId} --daily-cap <usd>`,
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
    const requestHash = ctx.idempotencyKey ? this.requestHash(ctx.request) : null;
    const stopReserve = once(this.metrics.dbTransactionDuration.startTimer({ operation: plan.kind }));
    const outcome = await this.reserve(ctx, plan, requestHash, stopReserve).finally(stopReserve);

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
    let signature: string;
    try {
      signature = await this.sign(outcome);
    } catch (err) {
      // Nobody holds a signature for this reservation: give the spend back (a resumed one stays reserved).
      if (outcome.fresh) await this.releaseEventually(ctx, outcome, 'signer_failed');
      throw err;
    }

    // Record the signature before it leaves. Only a reserved row takes it, so two concurrent retries of one
    // Idempotency-Key both answer with the single signature that was recorded.
    const payment: SignedPayment = { ...outcome.payment, signature };
    const stopRecord = this.metrics.dbTransactionDuration.startTimer({ operation: `${plan.kind}_record` });
    const row = await this.recorder
      .record(payment.authorization_id, signature, payment, this.clock())
      .finally(() => stopRecord())
      .catch(async (err: unknown) => {
        // Not recorded, so the signature never leaves: give the spend back. A record that committed after all
        // (its answer lost with the connection) keeps its row signed; only a row still reserved is released.
        if (outcome.fresh) await this.releaseEventually(ctx, outcome, 'record_failed');
        throw err;
      });
    if (!row || row.status !== 'signed' || !row.response.signature) {
      throw new AppError('internal_error', { message: 'The authorization was released before its signature could be recorded.' });
    }
    this.metrics.payDecisions.inc({ kind: plan.kind, outcome: outcome.fresh ? 'allow' : 'resumed' });
    this.faults.afterCommit?.();
    return row.response;
  }

  /** The signer's signature over the reservation's exact message (EIP-3009, or Permit2 for `upto`). */
  private async sign(reservation: Reservation): Promise<string> {
    const p = reservation.payment;
    const keys = { account_key_ref: reservation.accountKeyRef, wallet_key_ref: reservation.walletKeyRef };
    const signed =
      p.scheme === 'upto'
        ? await this.signer.call('sign_permit2_witness_transfer', {
            ...keys,
            address: p.permit2_authorization.from,
            domain: { name: 'Permit2', chainId: reservation.domain.chainId, verifyingContract: PERMIT2_ADDRESS },
            // The owner is the wallet itself: it is `address`, not a field of the signed struct.
            message: (({ from: _owner, ...permit }) => permit)(p.permit2_authorization),
          })
        : await this.signer.call('sign_transfer_authorization', { ...keys, address: p.authorization.from, domain: reservation.domain, message: p.authorization });
    return signed.signature;
  }

  /**
   * A fresh reservation decided in the group commit, signed while its write keeps its place in the writer's
   * queue (the wallet's later writes wait behind it), then written signed: authorization, spend and audit
   * row in one statement, committed before the signature leaves. If the signer fails, the reservation is
   * written unsigned in that place — the wallet's later decisions were taken on top of its audit row — and
   * released. A write that fails is refused with ReservationBatchAborted (taken again by `reserve`); its
   * signature never leaves.
   */
  private async signInPlace(ctx: CallContext, plan: SpendPlan, reservation: Reservation, write: DecisionWrite, place: WritePlace) {
    const written = () => place.committed.catch((err: unknown) => {
      throw markUncertain(err, reservation);
    });
    let signature: string;
    try {
      signature = await this.sign(reservation);
    } catch (err) {
      place.fill(write);
      await written();
      await this.releaseEventually(ctx, reservation, 'signer_failed');
      throw err;
    }
    this.faults.afterSign?.();
    const payment: SignedPayment = { ...reservation.payment, signature };
    const at = this.clock();
    const stopRecord = this.metrics.dbTransactionDuration.startTimer({ operation: `${plan.kind}_record` });
    place.fill(signedWrite(write, payment, signature, at));
    await written().finally(() => stopRecord());
    return { kind: 'signed' as const, payment };
  }

  /**
   * Check and reserve: take the wallet's snapshot, enforce the PAT cap and the policy, and write either the
   * denial (decision and audit row) or the reservation — authorization (nonce fixed, no signature yet),
   * spend totals and the audit row — in one statement, committed before returning.
   *
   * Without a buyer PAT or an Idempotency-Key this is group-committed (withWalletDecision +
   * ReservationWriter): the decision is taken on the wallet's remembered snapshot (which may already count
   * its payments still queued for writing) or on a fresh read, and the write joins the next shared statement.
   * A failed statement writes nothing and refuses every write queued behind it — or, when it failed because
   * of one row, that row and its wallet's later writes only (the writer commits the others); each of those
   * payments is taken again alone, except one whose own values PostgreSQL cannot hold (400 `unstorable_value`). Alone (withWalletSnapshot), it is one read and one autocommit write. Either way the
   * audit row at head + 1 fails the write if anything changed the wallet since the snapshot (UNIQUE
   * chain_key, seq), and the whole decision is taken again on a fresh read. With a buyer PAT its daily cap
   * spans wallets, so the exclusive wallet lock and the PAT lock are held across read and write
   * (withWalletTransaction). A concurrent first use of one Idempotency-Key is settled the same way (UNIQUE
   * wallet_id, idempotency_key). A fresh reservation in the group commit is signed before it is written
   * (signInPlace) and comes back `signed`; `decided` is called once it is decided, before the signer is asked.
   */
  private async reserve(ctx: CallContext, plan: SpendPlan, requestHash: string | null, decided: () => void) {
    let alone = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.reserveOnce(ctx, plan, requestHash, alone, decided);
      } catch (err) {
        this.snapshots.delete(ctx.walletId);
        if (ctx.pat) this.patTotals.delete(ctx.pat.tokenId);
        const uncertain = (err as { uncertainReservation?: Reservation } | null)?.uncertainReservation;
        // Its write may have committed although the connection dropped before the answer: nobody will sign
        // it (a retry decides anew), so it is given back once the database answers — or found not written.
        if (uncertain) void this.releaseEventually(ctx, uncertain, 'write_unacknowledged');
        // PostgreSQL refused a value of this payment's own row (the route schemas should have): it would fail
        // again, so it is not taken again; the payments that shared its statement were written without it.
        const ownRow = err instanceof ReservationBatchAborted ? (err.rowRefused ? err.cause : undefined) : err;
        if (isDataException(ownRow)) throw new AppError('unstorable_value', { fields: { sqlstate: (ownRow as { code: string }).code } });
        if (err instanceof ReservationBatchAborted) {
          // Nothing of this payment was written: take it again, alone, so that its own error (if any) is its answer.
          alone = true;
          if (attempt >= MAX_RESERVE_ATTEMPTS) throw err.cause;
          this.metrics.payConflicts.inc({ kind: plan.kind });
          continue;
        }
        const pgErr = err as { code?: string; constraint?: string };
        // 23514: another process counted the PAT's payments past what the locked read saw (they take no PAT lock).
        const stale =
          (pgErr.code === '23505' && (pgErr.constraint === 'audit_events_chain_key_seq_unique' || pgErr.constraint === 'authorizations_wallet_id_idempotency_key_unique')) ||
          (pgErr.code === '23514' && pgErr.constraint === 'pat_spend_totals_within_cap');
        if (!stale || attempt >= MAX_RESERVE_ATTEMPTS) throw err;
        this.metrics.payConflicts.inc({ kind: plan.kind });
      }
    }
  }

  private async reserveOnce(ctx: CallContext, plan: SpendPlan, requestHash: string | null, alone: boolean, decidedHook: () => void) {
    let now = this.clock();
    const opening = () => this.snapshotQuery(ctx.walletId, (now = this.clock()), ctx.idempotencyKey);
    const lockKey = walletLockKey(ctx.walletId).toString();
    const windowKey = (at: Date) => {
      const w = policyWindows(at);
      return `${isoDate(w.dayStart)}|${isoDate(w.weekStart)}|${isoDate(w.monthStart)}`;
    };
    // A buyer PAT with a daily cap: its total is checked and counted under its lock (locked transaction below).
    // Without a cap (as `xx init` mints the agent's PAT) the write only adds to its total, which one statement does atomically.
    const cappedPat = ctx.pat && ctx.pat.dailyCapMicro !== null ? { tokenId: ctx.pat.tokenId, dailyCapMicro: ctx.pat.dailyCapMicro } : undefined;
    const cacheable = ctx.idempotencyKey === undefined || this.firstUseOfKey(ctx.walletId, ctx.idempotencyKey);
    const remembered = () => {
      if (!cacheable) return undefined;
      const entry = this.snapshots.get(ctx.walletId);
      now = this.clock();
      if (!entry || entry.generation !== this.writer.generationOf(lockKey) || entry.windowKey !== windowKey(now)) return undefined;
      const row = rememberedAt(entry.row, now);
      if (!row) return undefined;
      this.metrics.paySnapshots.inc({ source: 'remembered' });
      return [row];
    };
    /** Once this request's write is decided: what the wallet's next payment may decide on. */
    const remember = (row: Record<string, unknown>, change: { auditHead: AuditHead; spentMicro?: bigint; at: Date }) => {
      if (!cacheable) return;
      const totals = (row.totals ?? {}) as Record<string, string>;
      const add = (k: string) => (BigInt(totals[k] ?? 0) + (change.spentMicro ?? 0n)).toString();
      const next = {
        ...row,
        totals: { day: add('day'), week: add('week'), month: add('month') },
        last_paid_at: change.spentMicro === undefined ? row.last_paid_at : change.at,
        recent: nextRecent(row.recent as VelocityWindow | null, change),
        audit_head: change.auditHead,
        previous: null,
      };
      this.snapshots.set(ctx.walletId, { row: next, windowKey: windowKey(change.at), generation: this.writer.generationOf(lockKey) });
    };
    /** Everything but the write: the outcome, the write that records it, and what the snapshot becomes. */
    const decide = ({ wallet, state, auditHead, previous, windows }: Snapshot): Decided => {

      const walletChain = this.chains.resolve(wallet.network);
      if (!walletChain) throw new AppError('network_not_supported', { fields: { network: wallet.network } });
      const chain = plan.chain ?? walletChain;
      if (chain.network !== wallet.network) {
        throw new AppError('network_not_supported', { message: `This wallet is on ${wallet.network}; the payment asks for ${chain.network}.`, fields: { network: chain.network, wallet_network: wallet.network } });
      }
      if (!wallet.wallet_key_ref) throw new AppError('wallet_revoked');
      const domain = { name: plan.domain?.name ?? chain.usdcName, version: plan.domain?.version ?? chain.usdcVersion, chainId: chain.chainId, verifyingContract: chain.usdc };
      const keys = { accountKeyRef: wallet.account_key_ref, walletKeyRef: wallet.wallet_key_ref, domain, windows };

      if (previous) {
        if (previous.request_hash !== requestHash) throw new AppError('idempotency_key_conflict', { fields: { idempotency_key: ctx.idempotencyKey } });
        if (previous.status === 'signed') return { outcome: { kind: 'replayed' as const, payment: previous.response } };
        // Reserved by an attempt whose response was lost before signing: sign the same message now.
        if (paymentTerms(previous.response).from.toLowerCase() !== wallet.address.toLowerCase()) {
          throw new AppError('idempotency_key_conflict', { message: 'The wallet was rotated since this Idempotency-Key was first used.', fields: { idempotency_key: ctx.idempotencyKey } });
        }
        return { outcome: { kind: 'reserved' as const, fresh: false, payment: previous.response, ...keys } satisfies Reservation };
      }

      const request: SpendRequest = { kind: plan.kind, amountMicro: plan.amountMicro, to: plan.to, capability: plan.capability };
      const decision = evaluatePolicy(wallet.policy as WalletPolicy, request, state, now);
      const decisionId = generateId('pd_');
      if (!decision.allowed) {
        const decisionValues: DecisionValues = [decisionId, wallet.id, 'deny', plan.kind, plan.amountMicro.toString(), plan.to, plan.capability ?? null, JSON.stringify(decision.violations), JSON.stringify(decision.headroom), now];
        const audit = buildAuditRow(auditHead, {
          chainKey: wallet.id,
          eventType: 'policy.denied',
          actor: ctx.actor,
          payload: { decision_id: decisionId, kind: plan.kind, to: plan.to, amount_usd: formatUsd(plan.amountMicro), capability: plan.capability ?? null, rules: decision.violations.map((v) => v.rule) },
          at: now,
        });
        return {
          outcome: { kind: 'denied' as const, decisionId, decision },
          write: { lockKey, decision: decisionValues, audit: auditValues(audit) },
          change: { auditHead: { seq: audit.seq, hash: audit.hash }, at: now },
        };
      }

      const window = authorizationWindow(plan);
      const authorizationId = generateId('auth_');
      const common = {
        signature: '',
        authorization_id: authorizationId,
        decision_id: decisionId,
        wallet_id: wallet.id,
        network: chain.network,
        asset: chain.usdc,
        amount_usd: formatUsd(plan.amountMicro),
        headroom: decision.headroom,
      };
      const payment: SignedPayment =
        plan.scheme === 'upto'
          ? {
              scheme: 'upto',
              permit2_authorization: {
                from: wallet.address,
                permitted: { token: chain.usdc, amount: plan.amountMicro.toString() },
                spender: x402UptoPermit2ProxyAddress,
                nonce: BigInt(window.nonce).toString(),
                deadline: window.validBefore,
                witness: { to: plan.to, facilitator: plan.facilitator!, validAfter: window.validAfter },
              },
              ...common,
            }
          : { scheme: 'exact', authorization: { from: wallet.address, to: plan.to, value: plan.amountMicro.toString(), ...window }, ...common };
      const authorization = paymentTerms(payment);
      const audit = buildAuditRow(auditHead, {
        chainKey: wallet.id,
        eventType: plan.kind === 'pay' ? 'payment.reserved' : 'transfer.reserved',
        actor: ctx.actor,
        payload: { authorization_id: authorizationId, decision_id: decisionId, scheme: plan.scheme, ...(plan.facilitator ? { facilitator: plan.facilitator } : {}), to: plan.to, amount_usd: payment.amount_usd, network: chain.network, nonce: authorization.nonce, valid_before: authorization.validBefore, capability: plan.capability ?? null, resource: plan.resource ?? null },
        at: now,
      });
      const amount = plan.amountMicro.toString();
      return {
        outcome: { kind: 'reserved' as const, fresh: true, payment, ...keys } satisfies Reservation,
        write: {
          lockKey,
          authorization: [
            authorizationId, wallet.id, decisionId, plan.kind, plan.scheme, chain.network, chain.usdc, wallet.address, plan.to, authorization.value, amount,
            authorization.validAfter, authorization.validBefore, authorization.nonce, plan.capability ?? null, plan.resource ?? null,
            // The payment object, serialised when the write is sent: a payment signed in place replaces it first.
            ctx.idempotencyKey ?? null, requestHash, payment, ctx.actor, now, 'reserved', null, null,
          ],
          spend: { walletId: wallet.id, windowStarts: { day: isoDate(windows.dayStart), week: isoDate(windows.weekStart), month: isoDate(windows.monthStart) }, amountMicro: plan.amountMicro },
          ...(ctx.pat ? { patSpend: { tokenId: ctx.pat.tokenId, day: isoDate(windows.dayStart), amountMicro: plan.amountMicro, capMicro: ctx.pat.dailyCapMicro } } : {}),
          audit: auditValues(audit),
        },
        change: { auditHead: { seq: audit.seq, hash: audit.hash }, spentMicro: plan.amountMicro, at: now },
      };
    };
    /** The write on its own, on the connection of the snapshot (or of the locked transaction). */
    const writeAlone = async (tx: WalletTx, decided: Decided) => {
      if (!decided.write) return;
      await tx.query(DECISION_WRITE_SQL, decisionWriteParams([decided.write]), DECISION_WRITE_NAME).catch((err: unknown) => {
        const pgErr = err as { code?: string; constraint?: string };
        if (pgErr.code === '23505' && pgErr.constraint?.includes('nonce') && decided.outcome.kind === 'reserved') {
          throw new AppError('nonce_already_used', { fields: { nonce: paymentTerms(decided.outcome.payment).nonce } });
        }
        throw err;
      });
    };

    /** A capped buyer PAT's payment decided under the wallet's and the PAT's locks, on a fresh read of both. */
    const underPatLock = async (pat: { tokenId: string; dailyCapMicro: bigint }) => {
      this.metrics.patCapChecks.inc({ source: 'read' });
      let lockedOutcome: Decided['outcome'] | undefined;
      let total: { day: string; spentMicro: bigint } | undefined;
      const outcome = await withWalletTransaction(
        this.knex,
        ctx.walletId,
        async (tx, rows, [, spentRows]) => {
          // 404 / 410 come before the PAT's cap; a resumed Idempotency-Key counts nothing new.
          const snapshot = this.readSnapshot(rows, ctx.accountId, ctx.walletId, now);
          if (!snapshot.previous) this.checkPatDailyCap(pat, spentRows, plan.amountMicro);
          const decided = decide(snapshot);
          lockedOutcome = decided.outcome;
          // The write counts the payment in the PAT's daily total too (DecisionWrite.patSpend).
          await writeAlone(tx, decided);
          const counted = decided.outcome.kind === 'reserved' && decided.outcome.fresh ? plan.amountMicro : 0n;
          total = { day: isoDate(snapshot.windows.dayStart), spentMicro: BigInt((spentRows?.[0]?.spent_micro as string | undefined) ?? 0) + counted };
          return decided.outcome;
        },
        () => {
          const query = opening();
          return { ...query, then: this.patCapQueries(pat.tokenId, policyWindows(now).dayStart) };
        },
      ).catch((err: unknown) => {
        // A COMMIT whose connection dropped may have committed.
        throw markUncertain(err, lockedOutcome);
      });
      if (total) this.patTotals.set(pat.tokenId, { ...total, generation: this.writer.generation });
      return outcome;
    };
    if (cappedPat && (alone || !cacheable || !this.patRoomRemembered(cappedPat, plan.amountMicro, now))) return underPatLock(cappedPat);
    const read = () => {
      this.metrics.paySnapshots.inc({ source: 'read' });
      return opening();
    };
    if (alone || !cacheable) {
      return withWalletSnapshot(
        this.knex,
        ctx.walletId,
        'treasury_pay_snapshot_v3',
        async (tx, rows) => {
          const decided = decide(this.readSnapshot(rows, ctx.accountId, ctx.walletId, now));
          await writeAlone(tx, decided).catch((err: unknown) => {
            throw markUncertain(err, decided.outcome);
          });
          if (decided.change) remember(rows[0]!, decided.change);
          return decided.outcome;
        },
        read,
        remembered,
      );
    }
    const { outcome, write, place } = await withWalletDecision(
      this.knex,
      ctx.walletId,
      'treasury_pay_snapshot_v3',
      (rows, track) => {
        const snapshot = this.readSnapshot(rows, ctx.accountId, ctx.walletId, now);
        // Payments of the same PAT decided while this one waited may have taken its room.
        if (cappedPat && !this.patRoomRemembered(cappedPat, plan.amountMicro, now)) return { outcome: undefined };
        if (cappedPat) this.metrics.patCapChecks.inc({ source: 'remembered' });
        const decided = decide(snapshot);
        if (!decided.write) return { outcome: decided.outcome };
        // The wallet's next payment decides on this write's outcome while it is on its way.
        remember(rows[0]!, decided.change!);
        if (cappedPat && decided.outcome.kind === 'reserved') this.patTotals.get(cappedPat.tokenId)!.spentMicro += plan.amountMicro;
        const place = this.writer.place(decided.write.lockKey);
        track(place.committed);
        return { outcome: decided.outcome, write: decided.write, place };
      },
      read,
      remembered,
    );
    if (!outcome) return underPatLock(cappedPat!);
    if (!write || !place) return outcome;
    if (outcome.kind === 'reserved') {
      decidedHook();
      return this.signInPlace(ctx, plan, outcome, write, place);
    }
    place.fill(write);
    await place.committed;
    return outcome;
  }

  /**
   * The signer failed on a fresh reservation: under the wallet lock, mark it released (freeing its
   * Idempotency-Key for a retry), give back the window and PAT totals it counted, and audit the release.
   * The released authorization still counts as the last payment (cooling-off errs on the safe side).
   */
  private async release(ctx: CallContext, reservation: Reservation, reason: ReleaseReason = 'signer_failed'): Promise<void> {
    const { payment, windows } = reservation;
    const released = await releaseReservation(
      this.knex,
      {
        walletId: ctx.walletId,
        authorizationId: payment.authorization_id,
        decisionId: payment.decision_id,
        amountMicro: parseUsd(payment.amount_usd),
        amountUsd: payment.amount_usd,
        nonce: paymentTerms(payment).nonce,
        windows,
        patTokenId: ctx.pat?.tokenId,
      },
      ctx.actor,
      reason,
      this.clock(),
    );
    if (released) this.metrics.payDecisions.inc({ kind: 'pay', outcome: 'released' });
    // What this process remembered of the PAT's day still counts the released payment: read it again.
    if (released && ctx.pat) this.patTotals.delete(ctx.pat.tokenId);
  }

  /**
   * Releases a fresh reservation whose signature never left — the signer failed, or the database failed under
   * its record or under its own write: now (the promise settles after this first attempt), and again after
   * 1, 5 and 30 s while the database does not answer. The release
   * is a no-op for a row that is not reserved (a record or write that committed after all is left as it is,
   * and one that never committed has no row). Pending attempts are lost if the process stops: the
   * reservation then stays counted until it expires and the sweep gives it back (./expired-reservation-sweeper.ts).
   */
  private releaseEventually(ctx: CallContext, reservation: Reservation, reason: Exclude<ReleaseReason, 'expired_unsigned'>): Promise<void> {
    const delaysMs = [1_000, 5_000, 30_000];
    const attempt = (n: number): Promise<void> =>
      this.release(ctx, reservation, reason).catch(() => {
        if (n < delaysMs.length) setTimeout(() => void attempt(n + 1), delaysMs[n]).unref();
        else this.metrics.payDecisions.inc({ kind: 'pay', outcome: 'release_failed' });
      });
    return attempt(0);
  }
}

/**
 * A remembered snapshot at `now`: the velocity window aged to `now` (./velocity-window.ts), or undefined when
 * its count can no longer be known without reading the wallet again.
 */
function rememberedAt(row: Record<string, unknown>, now: Date): Record<string, unknown> | undefined {
  const cap = (row.policy as { velocity_cap?: { window_seconds?: unknown } } | null)?.velocity_cap;
  if (!cap) return row;
  const recent = row.recent as VelocityWindow | null;
  if (!recent || typeof cap.window_seconds !== 'number') return undefined;
  const aged = ageVelocityWindow(recent, cap.window_seconds, now);
  if (!aged) return undefined;
  return aged === recent ? row : { ...row, recent: aged };
}

/** The rolling window after a write: a reservation adds one payment. */
function nextRecent(recent: VelocityWindow | null, change: { spentMicro?: bigint; at: Date }): VelocityWindow | null {
  if (!recent || change.spentMicro === undefined) return recent;
  return addToVelocityWindow(recent, change.at);
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

/** Optimistic reservations retried after a concurrent change of the same wallet (other processes only). */
const MAX_RESERVE_ATTEMPTS = 20;

/**
 * Marks `err` with the fresh reservation whose write it interrupted when the connection dropped (the write
 * may have committed; PayService.reserve releases it). A statement PostgreSQL refused wrote nothing: unmarked.
 */
function markUncertain(err: unknown, outcome: Decided['outcome'] | undefined): unknown {
  const cause = err instanceof ReservationBatchAborted ? err.cause : err;
  if (outcome?.kind === 'reserved' && outcome.fresh && !connectionUsableAfter(cause) && err !== null && typeof err === 'object') {
    (err as { uncertainReservation?: Reservation }).uncertainReservation = outcome;
  }
  return err;
}
