/**
 * The background worker that fetches proofs of control again (docs/security-model.md, Proofs of control): a seller's
 * origin (../origin/seller-origin-verification.ts), a gate's URL and its base domain
 * (../gate-address/gate-address-service.ts). Each round claims due proofs one at a time (./proof-recheck-store.ts:
 * a lease, FOR UPDATE SKIP LOCKED, so every API process may run one), fetches the verification file through the very
 * function the first proof used (`fetchOriginToken`, `fetchGateToken`; a base domain under a fresh random label,
 * `baseDomainFile`) and writes the decision of ./proof-recheck-decision.ts: proven (timestamp refreshed), kept (a
 * transient failure within TREASURY_PROOF_GRACE_SECONDS) or withdrawn (audited, logged). Each proof's next re-check is
 * one TREASURY_PROOF_RECHECK_SECONDS later.
 *
 * Defends: a proof outliving the control it proves (the pay path's challenge-origin binding and the catalogue read
 * the cleared timestamp); the process's shared, bounded DNS pool and outbound fetches flooded by re-checks (one fetch
 * at a time per process, at most `batch` per round, a round every `roundMs`); a withdrawal without a trace (an audit
 * event and a log line naming the proof, its address and the reason — never the token); a slow round holding the
 * shutdown (`stop` waits for the one fetch in flight, bounded by the fetch's own deadline).
 * Does not defend: what a remote side serves between two re-checks; a new owner serving the old token.
 */
import type { Logger } from 'pino';
import { startRepeatingTask, type RepeatingTask } from '../../../../base/repeating-task.js';
import { GATE_VERIFICATION_PATH } from '../../../shared/gate-address-schema.js';
import { describeError } from '../../log/describe-error.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import { baseDomainFile, fetchGateToken } from '../gate-address/gate-address-service.js';
import type { OriginFetchOptions } from '../origin/origin-verifier.js';
import { fetchOriginToken } from '../origin/seller-origin-verification.js';
import { decideRecheck, fetchOutcomeOf, PROOF_KINDS, type RecheckDecision } from './proof-recheck-decision.js';
import type { ClaimedProof, PgProofRecheckStore } from './proof-recheck-store.js';

export interface ProofRecheckerOptions {
  /** TREASURY_PROOF_RECHECK_SECONDS. */
  intervalSeconds: number;
  /** TREASURY_PROOF_GRACE_SECONDS (at least the interval: src/api/config/proof-recheck-config.ts). */
  graceSeconds: number;
  /** Between rounds (ms); 0: no background rounds (runOnce still works). One minute by default. */
  roundMs?: number;
  /** Proofs re-checked per round at most; 20 by default. */
  batch?: number;
  /** How long a claimed proof is left alone by other processes (s); 120 by default (a fetch's deadline is 5 s). */
  leaseSeconds?: number;
}

/** What the re-checker is given (wired once in ../sellers-wing.ts). */
export interface ProofRecheckerDeps {
  store: Pick<PgProofRecheckStore, 'claimNext' | 'refresh' | 'keep' | 'withdraw'>;
  /** The operator's outbound rules, as the first proofs use them. */
  outbound: OriginFetchOptions;
  metrics: Pick<TreasuryMetrics, 'proofRechecks'>;
  log: Logger;
  clock: () => Date;
  options: ProofRecheckerOptions;
}

export class ProofRechecker {
  private task: RepeatingTask | undefined;
  private stopped = true;
  private readonly roundMs: number;
  private readonly batch: number;
  private readonly leaseSeconds: number;

  constructor(private readonly deps: ProofRecheckerDeps) {
    this.roundMs = deps.options.roundMs ?? 60_000;
    this.batch = deps.options.batch ?? 20;
    this.leaseSeconds = deps.options.leaseSeconds ?? 120;
  }

  /** Starts background rounds (base/repeating-task.ts), the first one round from now (no burst at start); no-op with roundMs 0. */
  start(): void {
    if (this.roundMs === 0 || this.task) return;
    this.stopped = false;
    this.task = startRepeatingTask({
      name: 'proof_rechecker',
      everyMs: this.roundMs,
      runAtStart: false,
      run: () =>
        this.round(() => this.stopped).catch((err: unknown) =>
          this.deps.log.warn({ err: describeError(err) }, 'proof re-check round failed; retried at the next round'),
        ),
    });
  }

  /** Stops the rounds and waits for the one in flight (it ends after its current fetch). */
  async stop(): Promise<void> {
    this.stopped = true;
    const task = this.task;
    this.task = undefined;
    await task?.close();
  }

  /**
   * One round: claims due proofs one at a time, the three kinds in turns, and decides each, until `batch` were
   * re-checked or none is due; answers how many it re-checked. A proof whose re-check failed on our side (not the
   * fetch's) is logged and left to its lease.
   */
  runOnce(): Promise<number> {
    return this.round(() => false);
  }

  /** A round, which ends early (after its current re-check) once `halted` says so. */
  private async round(halted: () => boolean): Promise<number> {
    let done = 0;
    const exhausted = new Set<string>();
    while (done < this.batch && exhausted.size < PROOF_KINDS.length) {
      for (const kind of PROOF_KINDS) {
        if (exhausted.has(kind) || done >= this.batch) continue;
        if (halted()) return done;
        const now = this.deps.clock();
        const proof = await this.deps.store.claimNext(kind, {
          now,
          leaseUntil: new Date(now.getTime() + this.leaseSeconds * 1000),
          intervalSeconds: this.deps.options.intervalSeconds,
        });
        if (!proof) {
          exhausted.add(kind);
          continue;
        }
        done++;
        try {
          await this.recheck(proof, now);
        } catch (err) {
          this.deps.log.warn({ proof: proof.kind, err: describeError(err) }, 'proof re-check failed');
        }
      }
    }
    return done;
  }

  private async recheck(proof: ClaimedProof, claimedAt: Date): Promise<void> {
    const outcome = fetchOutcomeOf(
      await this.fetch(proof).then(
        () => undefined,
        (err: unknown) => err ?? 'unknown',
      ),
    );
    const at = this.deps.clock();
    const decision = decideRecheck({
      outcome,
      lastProvenAt: proof.provenAt,
      now: at,
      graceSeconds: this.deps.options.graceSeconds,
    });
    const nextAt = new Date(at.getTime() + this.deps.options.intervalSeconds * 1000);
    if (decision.outcome === 'proven') await this.deps.store.refresh(proof, at, nextAt);
    else if (decision.outcome === 'kept') await this.deps.store.keep(proof, nextAt);
    else if (await this.deps.store.withdraw(proof, { reason: decision.reason, at, claimedAt }))
      this.logWithdrawn(proof, decision);
    this.deps.metrics.proofRechecks.inc({ proof: proof.kind, outcome: decision.outcome });
  }

  /** The verification file's fetch, through the first proof's own function. */
  private fetch(proof: ClaimedProof): Promise<void> {
    const { outbound } = this.deps;
    if (proof.kind === 'seller_origin') return fetchOriginToken(proof.url, proof.token, outbound);
    const file =
      proof.kind === 'gate_url'
        ? new URL(GATE_VERIFICATION_PATH, proof.url)
        : baseDomainFile(proof.url, proof.baseDomain ?? '');
    return fetchGateToken(file, proof.token, outbound);
  }

  private logWithdrawn(proof: ClaimedProof, decision: RecheckDecision & { outcome: 'withdrawn' }): void {
    this.deps.log.warn(
      {
        proof: proof.kind,
        ...(proof.kind === 'seller_origin' ? { seller_id: proof.subjectId } : {}),
        account_id: proof.accountId,
        url: proof.url,
        ...(proof.baseDomain !== null ? { base_domain: proof.baseDomain } : {}),
        reason: decision.reason,
        last_proven_at: proof.provenAt.toISOString(),
      },
      'proof of control withdrawn',
    );
  }
}
