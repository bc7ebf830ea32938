/**
 * Where the proof re-checker (./proof-rechecker.ts) claims due proofs and writes what it decided
 * (migrations/20261203140000_proof_rechecks.ts): a seller's origin (`sellers.verified_at`, `origin_recheck_at`), a
 * gate's URL (`gate_addresses.verified_at`, `url_recheck_at`) and its base domain (`base_domain_verified_at`,
 * `base_domain_recheck_at`). A proof is due when its re-check time passed, or, with none, one interval after it was
 * last proven; a base domain only while its URL is proven.
 *
 * Defends: two API processes fetching one proof at once (a claim takes one due proof with FOR UPDATE SKIP LOCKED and
 * moves its re-check time to the end of a lease in the same statement; a process that dies mid-check leaves the
 * proof to the next claim after the lease); an outcome written over a proof that changed meanwhile (every write
 * names the origin, URL or domain that was fetched; a withdrawal also needs the proof to be no newer than the claim,
 * so a proof made again by its owner while the re-check ran is not undone); a withdrawal without its trace (the
 * timestamp is cleared and an audit event appended on the account's chain in one transaction; the payload names the
 * proof, the address and the reason — never the token). The consumers (the pay path's challenge-origin binding, the
 * catalogue, the gate service) read the timestamps as they always did: withdrawn is null.
 * Does not defend: the decision itself (./proof-recheck-decision.ts).
 */
import type { Knex } from 'knex';
import { appendAuditEvent } from '../../audit/audit-ledger.js';
import type { ProofKind } from './proof-recheck-decision.js';

/** Who a withdrawal is recorded as made by (audit actor). */
export const PROOF_RECHECK_ACTOR = 'treasury-proof-recheck';

/** A claimed proof: what the re-checker fetches and what its writes name. */
export interface ClaimedProof {
  kind: ProofKind;
  /** The seller (seller_origin) or the account (gate_url, gate_base_domain). */
  subjectId: string;
  accountId: string;
  /** The seller's origin or the gate's URL. */
  url: string;
  /** The gate's base domain (gate_base_domain only). */
  baseDomain: string | null;
  token: string;
  /** When the proof was last proven. */
  provenAt: Date;
}

export interface ClaimWindow {
  now: Date;
  /** Until when the claimed proof is left alone by other processes. */
  leaseUntil: Date;
  /** TREASURY_PROOF_RECHECK_SECONDS: a proof with no re-check time is due this long after it was proven. */
  intervalSeconds: number;
}

interface ClaimedRow {
  subject_id: string;
  account_id: string;
  url: string;
  base_domain: string | null;
  token: string;
  proven_at: Date;
}

/**
 * Per proof: the claim (one due row, leased), and the table, key, timestamp and re-check columns the writes use.
 * Bindings of each claim: leaseUntil, now, now - interval.
 */
const PROOFS: Readonly<
  Record<ProofKind, { table: string; key: string; provenAt: string; recheckAt: string; same: string; claim: string }>
> = {
  seller_origin: {
    table: 'sellers',
    key: 'id',
    provenAt: 'verified_at',
    recheckAt: 'origin_recheck_at',
    same: 'origin = ?',
    claim: `
      UPDATE sellers s SET origin_recheck_at = ?
        FROM (SELECT id FROM sellers
               WHERE verified_at IS NOT NULL AND origin IS NOT NULL AND verification_token IS NOT NULL
                 AND (origin_recheck_at <= ? OR (origin_recheck_at IS NULL AND verified_at <= ?))
               ORDER BY COALESCE(origin_recheck_at, verified_at), id
               LIMIT 1 FOR UPDATE SKIP LOCKED) due
       WHERE s.id = due.id
      RETURNING s.id AS subject_id, s.account_id, s.origin AS url, NULL AS base_domain,
                s.verification_token AS token, s.verified_at AS proven_at`,
  },
  gate_url: {
    table: 'gate_addresses',
    key: 'account_id',
    provenAt: 'verified_at',
    recheckAt: 'url_recheck_at',
    same: 'url = ?',
    claim: `
      UPDATE gate_addresses g SET url_recheck_at = ?
        FROM (SELECT account_id FROM gate_addresses
               WHERE verified_at IS NOT NULL
                 AND (url_recheck_at <= ? OR (url_recheck_at IS NULL AND verified_at <= ?))
               ORDER BY COALESCE(url_recheck_at, verified_at), account_id
               LIMIT 1 FOR UPDATE SKIP LOCKED) due
       WHERE g.account_id = due.account_id
      RETURNING g.account_id AS subject_id, g.account_id, g.url, NULL AS base_domain,
                g.verification_token AS token, g.verified_at AS proven_at`,
  },
  gate_base_domain: {
    table: 'gate_addresses',
    key: 'account_id',
    provenAt: 'base_domain_verified_at',
    recheckAt: 'base_domain_recheck_at',
    same: 'url = ? AND base_domain = ?',
    claim: `
      UPDATE gate_addresses g SET base_domain_recheck_at = ?
        FROM (SELECT account_id FROM gate_addresses
               WHERE verified_at IS NOT NULL AND base_domain IS NOT NULL AND base_domain_verified_at IS NOT NULL
                 AND (base_domain_recheck_at <= ?
                      OR (base_domain_recheck_at IS NULL AND base_domain_verified_at <= ?))
               ORDER BY COALESCE(base_domain_recheck_at, base_domain_verified_at), account_id
               LIMIT 1 FOR UPDATE SKIP LOCKED) due
       WHERE g.account_id = due.account_id
      RETURNING g.account_id AS subject_id, g.account_id, g.url, g.base_domain,
                g.verification_token AS token, g.base_domain_verified_at AS proven_at`,
  },
};

/** The audit event of a withdrawn proof, per kind. */
const WITHDRAWN_EVENT: Readonly<Record<ProofKind, string>> = {
  seller_origin: 'seller.origin_proof_withdrawn',
  gate_url: 'gate.address_proof_withdrawn',
  gate_base_domain: 'gate.base_domain_proof_withdrawn',
};

/** The bindings naming what was fetched (the `same` condition). */
function sameBindings(proof: ClaimedProof): Array<string> {
  return proof.kind === 'gate_base_domain' ? [proof.url, proof.baseDomain ?? ''] : [proof.url];
}

export class PgProofRecheckStore {
  constructor(private readonly knex: Knex) {}

  /** Claims one due proof of `kind` and leases it; undefined when none is due (or all are held by others). */
  async claimNext(kind: ProofKind, window: ClaimWindow): Promise<ClaimedProof | undefined> {
    const provenBefore = new Date(window.now.getTime() - window.intervalSeconds * 1000);
    const result = await this.knex.raw(PROOFS[kind].claim, [window.leaseUntil, window.now, provenBefore]);
    const row = (result as { rows: ClaimedRow[] }).rows[0];
    if (!row) return undefined;
    return {
      kind,
      subjectId: row.subject_id,
      accountId: row.account_id,
      url: row.url,
      baseDomain: row.base_domain,
      token: row.token,
      provenAt: row.proven_at,
    };
  }

  /** The file still serves the token: proven again at `at`, re-checked at `nextAt`. False if it changed meanwhile. */
  async refresh(proof: ClaimedProof, at: Date, nextAt: Date): Promise<boolean> {
    const p = PROOFS[proof.kind];
    const result = await this.knex.raw(
      `UPDATE ${p.table} SET ${p.provenAt} = ?, ${p.recheckAt} = ?
        WHERE ${p.key} = ? AND ${p.same} AND ${p.provenAt} IS NOT NULL`,
      [at, nextAt, proof.subjectId, ...sameBindings(proof)],
    );
    return ((result as { rowCount: number | null }).rowCount ?? 0) > 0;
  }

  /** A transient failure within the grace: the proof stays as it is, re-checked at `nextAt`. */
  async keep(proof: ClaimedProof, nextAt: Date): Promise<void> {
    const p = PROOFS[proof.kind];
    await this.knex.raw(
      `UPDATE ${p.table} SET ${p.recheckAt} = ? WHERE ${p.key} = ? AND ${p.same} AND ${p.provenAt} IS NOT NULL`,
      [nextAt, proof.subjectId, ...sameBindings(proof)],
    );
  }

  /**
   * Withdraws the proof (its timestamp null) and appends the audit event, in one transaction; only while it names
   * what was fetched and was not proven again after `claimedAt`. Answers whether it withdrew it.
   */
  async withdraw(proof: ClaimedProof, withdrawal: { reason: string; at: Date; claimedAt: Date }): Promise<boolean> {
    const p = PROOFS[proof.kind];
    return this.knex.transaction(async (trx) => {
      const result = await trx.raw(
        `UPDATE ${p.table} SET ${p.provenAt} = NULL, ${p.recheckAt} = NULL
          WHERE ${p.key} = ? AND ${p.same} AND ${p.provenAt} IS NOT NULL AND ${p.provenAt} <= ?`,
        [proof.subjectId, ...sameBindings(proof), withdrawal.claimedAt],
      );
      if (((result as { rowCount: number | null }).rowCount ?? 0) === 0) return false;
      await appendAuditEvent(trx, {
        chainKey: proof.accountId,
        eventType: WITHDRAWN_EVENT[proof.kind],
        actor: PROOF_RECHECK_ACTOR,
        payload: {
          proof: proof.kind,
          ...(proof.kind === 'seller_origin' ? { seller_id: proof.subjectId, origin: proof.url } : { url: proof.url }),
          ...(proof.baseDomain !== null ? { base_domain: proof.baseDomain } : {}),
          reason: withdrawal.reason,
          last_proven_at: proof.provenAt.toISOString(),
        },
        at: withdrawal.at,
      });
      return true;
    });
  }
}
