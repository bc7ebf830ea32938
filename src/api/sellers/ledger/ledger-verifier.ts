/**
 * The background worker that decides pending seller ledger rows on chain (docs/adr/0009-ledger-verification.md).
 * Each round claims a batch of due `pending` rows, accounts and their sellers in turns (../store/ledger-fair-claim.ts;
 * a lease on `next_check_at`, FOR UPDATE SKIP LOCKED, so every API process may run one without two checking the same
 * row), reads each row's transaction with its receipt and depth from the network's RPC, `bounded` at `concurrency`
 * at once, and writes the verdict of ../chain/verify-ledger-transfer.ts against where the row's money may have
 * gone (../store/ledger-row-claim.ts; the row names the buyer's authorization only when the transaction spent it,
 * docs/adr/0011-merchant-of-record.md): `verified` (PostgreSQL triggers then add it to the seller's revenue, and
 * a platform_mor one to its collection wallet's collected and the seller's payables), `rejected` with a reason,
 * or still `pending` with a reason and the next check after a backoff.
 *
 * The row's mode is where the chain shows its money went, not the seller's mode when it reported (it may have
 * switched since its buyer paid): a transfer to the seller's collection wallet on the row's network verifies it
 * `platform_mor` (the platform collected it and owes it; only a seller that was platform_mor there has one), a
 * transfer to a pay-to address it proved `direct` (revenue, nothing owed). The mode it was reported in is tried
 * first (./recipient-mode.ts); the mode is written with the verdict, final once verified.
 *
 * Rows of a Solana network are read and judged by ./solana-ledger-check.ts (its signature on TREASURY_SOLANA_RPC_URL,
 * the seller's Solana pay-to addresses), with the same reasons.
 *
 * Pending reasons: awaiting_verification (not checked yet), awaiting_confirmations, transaction_not_found
 * (the RPC does not know it yet; rejected once `notFoundGraceSeconds` passed since the report),
 * rpc_unavailable (the RPC failed), rpc_not_configured / network_not_supported (nothing to ask; checked again
 * at the next start of a process, when the configuration may have changed), pay_to_not_registered (the seller
 * proved no pay-to address of the row's chain family yet and has no collection wallet on its network; registering
 * one makes its rows due).
 * Rejection reasons: those of the check, transaction_not_found, transfer_already_claimed (the Transfer backs
 * another seller's verified row — two sellers proved the same pay-to address), platform_payout (the matching
 * transfer's payer is a platform collection wallet — any seller's, on any network — or the transaction is a
 * payout's: the platform's own money, no buyer's). Among the check's: self_payment, a transfer from one of the
 * seller's own addresses on the row's network — any of its proven pay-to addresses of that chain family and its
 * collection wallet there, whatever the row's payout mode.
 *
 * Defends: revenue and payables on a seller's word (nothing counts until checked); revenue and paid calls
 * inflated by a seller sending its own USDC to itself, over and over (self_payment); money a collection wallet
 * took being owed to nobody because the seller switched to direct before reporting it, and money paid to a
 * pay-to being owed because the seller switched to platform_mor (the recipient decides the mode); a payout to a
 * pay-to address two sellers proved counted as the other seller's revenue (platform_payout); one slow or dead RPC
 * holding the worker (bounded concurrency, the reader's short timeout, exponential backoff per row).
 * Does not defend: a lying RPC; reorganisations deeper than the configured confirmations; a seller paying itself
 * from an address it never proved (on chain it looks like any buyer).
 */
import type { Logger } from 'pino';
import type { Hash } from 'viem';
import type { BalanceReader } from '../../chain/balance-reader.js';
import { isChainReadRefusal, type ChainReads } from '../../chain/chain-read-admission.js';
import type { ChainRegistry } from '../../../shared/chain-registry.js';
import { verifyLedgerTransfer } from '../../chain/verify-ledger-transfer.js';
import type { AuthorizationLink, RowClaim } from '../store/ledger-row-claim.js';
import { candidatesOf, decisive, type PayoutMode } from './recipient-mode.js';
import { requiredConfirmations } from '../../config/app-config.js';
import { AppError } from '../../errors/app-error.js';
import type { ClaimedLedgerRow } from '../store/ledger-fair-claim.js';
import type { LedgerVerificationStore } from '../store/ledger-stores.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import type { SolanaLedgerCheck } from './solana-ledger-check.js';

const isSolanaNetwork = (network: string) => network.startsWith('solana:');

export interface LedgerVerifierOptions {
  /** Between rounds (ms); 0: no background rounds (runOnce still works). */
  intervalMs: number;
  concurrency: number;
  /** Confirmations required per network (networks not named need 1). */
  confirmations: Readonly<Record<string, number>>;
  notFoundGraceSeconds: number;
  /** Rows claimed per round. */
  batch?: number;
  /** The most rows of one account (all its sellers) per batch (accounts are served in turns); 25 by default. */
  sellerShare?: number;
  /** First retry delay (ms), doubled per attempt up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a claimed row is left alone by other processes while this one checks it (s). */
  leaseSeconds?: number;
}

/** What the verifier is given (wired once in src/api/app.ts). */
export interface LedgerVerifierDeps {
  /** Where due rows are claimed and verdicts written (../store/ledger-stores.ts). */
  store: LedgerVerificationStore;
  chains: ChainRegistry;
  /** Reads a transaction with its receipt and depth. */
  reader: Pick<BalanceReader, 'minedTransaction'>;
  /** The RPC URL of each network rows can be checked on. */
  rpcUrls: Readonly<Record<string, string>>;
  /** Where Solana rows are checked (absent: they wait as rpc_not_configured). */
  solana?: Pick<SolanaLedgerCheck, 'unreachableReason' | 'check'> | undefined;
  /** Where a Solana row's read waits for its seller's place (the EVM reads wait inside `reader`). */
  chainReads: ChainReads;
  metrics: TreasuryMetrics;
  log: Logger;
  clock: () => Date;
  options: LedgerVerifierOptions;
}

export type PendingReason =
  | 'awaiting_verification'
  | 'awaiting_confirmations'
  | 'transaction_not_found'
  | 'rpc_unavailable'
  | 'rpc_not_configured'
  | 'network_not_supported'
  | 'pay_to_not_registered';

type ClaimedRow = ClaimedLedgerRow;

type Verdict =
  | { status: 'pending'; reason: PendingReason; confirmations?: number | undefined; retryMs: number }
  | { status: 'rejected'; reason: string; confirmations?: number | undefined }
  | {
      status: 'verified';
      logIndexes: number[];
      confirmations: number;
      link: AuthorizationLink | undefined;
      /** Where the transfer went: the seller's collection wallet (platform_mor) or a pay-to it proved (direct). */
      mode: PayoutMode;
    };

export class LedgerVerifier {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly batch: number;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly leaseSeconds: number;
  private readonly sellerShare: number;
  /** Whether the last claim may have left due rows behind. */
  private moreDue = false;

  private readonly store: LedgerVerificationStore;
  private readonly chains: ChainRegistry;
  private readonly reader: Pick<BalanceReader, 'minedTransaction'>;
  private readonly rpcUrls: Readonly<Record<string, string>>;
  private readonly solana: LedgerVerifierDeps['solana'];
  private readonly chainReads: ChainReads;
  private readonly metrics: TreasuryMetrics;
  private readonly log: Logger;
  private readonly clock: () => Date;
  private readonly options: LedgerVerifierOptions;

  constructor(deps: LedgerVerifierDeps) {
    ({
      store: this.store,
      chains: this.chains,
      reader: this.reader,
      rpcUrls: this.rpcUrls,
      solana: this.solana,
      chainReads: this.chainReads,
      metrics: this.metrics,
      log: this.log,
      clock: this.clock,
      options: this.options,
    } = deps);
    const { options } = deps;
    this.batch = options.batch ?? 100;
    this.baseBackoffMs = options.baseBackoffMs ?? 2_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 3_600_000;
    this.leaseSeconds = options.leaseSeconds ?? 120;
    this.sellerShare = options.sellerShare ?? 25;
  }

  /** Why a new row of `network` cannot be checked at all, if it cannot (no chain or no RPC configured). */
  unreachableReason(network: string): 'network_not_supported' | 'rpc_not_configured' | undefined {
    if (isSolanaNetwork(network)) return this.solana ? this.solana.unreachableReason(network) : 'rpc_not_configured';
    if (!this.chains.resolve(network)) return 'network_not_supported';
    if (!Object.prototype.hasOwnProperty.call(this.rpcUrls, network)) return 'rpc_not_configured';
    return undefined;
  }

  /** When a row parked for `reason` is looked at again. */
  parkedUntil(): Date {
    return new Date(this.clock().getTime() + this.maxBackoffMs);
  }

  /** Starts background rounds (no-op with intervalMs 0). Rows parked for the configuration are made due: it may have changed. */
  start(): void {
    if (this.options.intervalMs === 0 || !this.stopped) return;
    this.stopped = false;
    void this.store
      .reopenParked(this.clock())
      .catch(() => undefined)
      .finally(() => this.schedule(0));
  }

  /** A row was reported: check soon rather than at the next interval. */
  nudge(): void {
    if (this.stopped || this.running) return;
    this.schedule(50);
  }

  /** Stops the rounds and waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.round().finally(() => {
        this.running = undefined;
        this.schedule(this.options.intervalMs);
      });
    }, ms);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    try {
      // A full batch, or an account's whole share, may leave more due rows: take the next one at once.
      while (!this.stopped && (await this.runOnce()) > 0 && this.moreDue);
      this.metrics.ledgerPendingRows.set(await this.store.pendingCount());
    } catch (err) {
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'ledger verification round failed; retried at the next interval',
      );
    }
  }

  /** One batch: claims due pending rows and decides each; answers how many rows it claimed. */
  async runOnce(): Promise<number> {
    const now = this.clock();
    // Accounts in turns, at most sellerShare rows of one account per batch (../store/ledger-fair-claim.ts).
    const { rows, moreDue } = await this.store.claimDue({
      now,
      leaseUntil: new Date(now.getTime() + this.leaseSeconds * 1000),
      batch: this.batch,
      sellerShare: this.sellerShare,
    });
    this.moreDue = moreDue;
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++]!;
        try {
          await this.decide(row);
        } catch (err) {
          // The lease brings the row back after leaseSeconds.
          this.metrics.ledgerVerifications.inc({ outcome: 'error' });
          this.log.warn(
            { ledger_entry_id: row.id, err: err instanceof Error ? err.message : String(err) },
            'ledger row verification failed',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, rows.length) }, worker));
    return rows.length;
  }

  private async decide(row: ClaimedRow): Promise<void> {
    const verdict = await this.judge(row);
    const at = this.clock();
    const common = { checked_at: at, attempts: row.attempts + 1, confirmations: verdict.confirmations ?? null };
    if (verdict.status === 'pending') {
      await this.store.keepPending(row.id, common, verdict.reason, new Date(at.getTime() + verdict.retryMs));
    } else if (verdict.status === 'rejected') {
      await this.store.reject(row.id, common, verdict.reason);
    } else {
      let claimed = false;
      // The first of the transaction's matching transfers no other row is verified on.
      for (const logIndex of verdict.logIndexes)
        if ((claimed = await this.store.verify(row.id, common, logIndex, at, verdict.link, verdict.mode))) break;
      if (!claimed) await this.store.reject(row.id, common, 'transfer_already_claimed');
    }
    this.metrics.ledgerVerifications.inc({ outcome: verdict.status === 'verified' ? 'verified' : verdict.status });
  }

  /** The row's verdict: the chain's, and a transfer the platform made itself is nobody's revenue. */
  private async judge(row: ClaimedRow): Promise<Verdict> {
    const verdict = await this.judgeOnChain(row);
    if (verdict.status === 'verified' && (await this.store.platformTransfer(row)))
      return { status: 'rejected', reason: 'platform_payout', confirmations: verdict.confirmations };
    return verdict;
  }

  private async judgeOnChain(row: ClaimedRow): Promise<Verdict> {
    const parked = this.maxBackoffMs;
    const unreachable = this.unreachableReason(row.network);
    if (unreachable) return { status: 'pending', reason: unreachable, retryMs: parked };
    const claim = await this.claimOf(row);
    const recipients = await this.store.recipientsOf(row);
    const candidates = candidatesOf(recipients, claim.payout_mode);
    if (candidates.length === 0) return { status: 'pending', reason: 'pay_to_not_registered', retryMs: parked };
    // Every address of the seller on the row's network, whatever the mode: a transfer from one is self_payment.
    const own = [...recipients.collection, ...recipients.payTo];
    // A Solana row pays a proven pay-to (the platform collects on EVM networks only).
    if (isSolanaNetwork(row.network)) return this.judgeSolana(row, recipients.payTo, own);
    const chain = this.chains.resolve(row.network)!;
    let tx;
    try {
      tx = await this.reader.minedTransaction(row.account_id, chain, row.tx_hash.trim() as Hash);
    } catch (err) {
      if (err instanceof AppError && err.code === 'network_not_supported')
        return { status: 'pending', reason: 'rpc_not_configured', retryMs: parked };
      // The RPC failed, or the chain reads' admission refused the read (nothing read): checked again after a backoff.
      if (isChainReadRefusal(err) || (err instanceof AppError && err.code === 'chain_unavailable'))
        return { status: 'pending', reason: 'rpc_unavailable', retryMs: this.backoff(row.attempts) };
      throw err;
    }
    if (!tx) return this.notFound(row);
    const checked = candidates.map((c) => ({
      mode: c.mode,
      verdict: verifyLedgerTransfer(tx, {
        asset: chain.usdc,
        payer: row.payer.trim(),
        payTo: c.recipients,
        ownAddresses: own,
        amountRaw: BigInt(row.amount_micro),
        requiredConfirmations: requiredConfirmations(this.options.confirmations, row.network),
      }),
    }));
    const { mode, verdict } = decisive(checked);
    if (verdict.kind === 'pending')
      return {
        status: 'pending',
        reason: verdict.reason,
        confirmations: verdict.confirmations,
        retryMs: Math.min(this.backoff(row.attempts), 60_000),
      };
    if (verdict.kind === 'rejected')
      return { status: 'rejected', reason: verdict.reason, confirmations: verdict.confirmations };
    const found = claim.nonce ? await this.store.linkAuthorization(row, claim.nonce, tx, chain.usdc) : undefined;
    const link = found && verdict.logIndexes.includes(found.logIndex) ? found : undefined;
    // The authorization's own Transfer is the one this row claims, when the chain showed it.
    const logIndexes = link ? [link.logIndex] : verdict.logIndexes;
    return { status: 'verified', logIndexes, confirmations: verdict.confirmations, link, mode };
  }

  /** A Solana row (./solana-ledger-check.ts): the same verdicts; no authorization link (a Solana row names no nonce). */
  private async judgeSolana(row: ClaimedRow, payTo: string[], own: string[]): Promise<Verdict> {
    let checked;
    try {
      checked = await this.chainReads.run(row.account_id, () => this.solana!.check(row, payTo, own));
    } catch (err) {
      if (isChainReadRefusal(err))
        return { status: 'pending', reason: 'rpc_unavailable', retryMs: this.backoff(row.attempts) };
      throw err;
    }
    if (checked.kind === 'other_cluster')
      return { status: 'pending', reason: 'rpc_not_configured', retryMs: this.maxBackoffMs };
    if (checked.kind === 'unavailable')
      return { status: 'pending', reason: 'rpc_unavailable', retryMs: this.backoff(row.attempts) };
    if (checked.kind === 'not_found') return this.notFound(row);
    if (checked.kind === 'pending')
      return {
        status: 'pending',
        reason: checked.reason,
        confirmations: checked.confirmations,
        retryMs: Math.min(this.backoff(row.attempts), 60_000),
      };
    if (checked.kind === 'rejected')
      return { status: 'rejected', reason: checked.reason, confirmations: checked.confirmations };
    return {
      status: 'verified',
      logIndexes: checked.logIndexes,
      confirmations: checked.confirmations,
      link: undefined,
      mode: 'direct',
    };
  }

  /** The RPC does not know the transaction: rejected once the grace period since the report passed. */
  private notFound(row: ClaimedRow): Verdict {
    const waited = (this.clock().getTime() - row.created_at.getTime()) / 1000;
    if (waited >= this.options.notFoundGraceSeconds) return { status: 'rejected', reason: 'transaction_not_found' };
    return { status: 'pending', reason: 'transaction_not_found', retryMs: this.backoff(row.attempts) };
  }

  /** What the row was reported as: the seller's payout mode then (tried first) and the nonce it names. */
  private claimOf(row: ClaimedRow): Promise<RowClaim> {
    return this.store.claimOf(row.id);
  }

  private backoff(attempts: number): number {
    return Math.min(this.maxBackoffMs, this.baseBackoffMs * 2 ** Math.min(attempts, 20));
  }
}
