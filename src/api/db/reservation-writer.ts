/**
 * Writes pay-path decisions — a denial (decision row + audit row) or an allowed payment (authorization,
 * either already signed or reserved with no signature yet, spend totals, the paying buyer PAT's daily total,
 * audit row; the authorization and the audit row carry its decision id) —
 * several to one autocommit statement when payments arrive together (./group-commit-queue.ts): a write is
 * sent at once when no statement is running, otherwise it joins the next one. One prepared `INSERT …
 * SELECT FROM jsonb_to_recordset(…)` statement (one JSON document per table, ./json-rows.ts) serves one
 * write or hundreds, and the same statement is what a single write runs on its own. Statements run on the
 * writer's own connection (./statement-connection.ts). A decision may take its place in the queue before its
 * write exists (`place`, then `fill`): the pay path keeps a payment's place while the signer signs it, so
 * that its signature is written with its decision in one statement, and the wallet's later writes wait
 * behind it (other wallets' do not).
 *
 * Defends: atomicity — the statement commits every decision in it or none, and each caller's promise
 * resolves only after it committed. Speculation — a wallet's next payment may decide on the state its
 * previous, still queued write will leave (its audit row at head + 2, …); if a statement fails, nothing in
 * it was written, so every write queued behind it is refused as well (never sent after a gap) and
 * `generation` moves on, which tells callers that any state they remembered from before may be wrong.
 * Each write still carries its audit row at the chain's expected head + 1 (UNIQUE chain_key, seq), so a
 * change by another process fails the statement instead of forking the chain.
 * Isolation — a statement that fails because of one of its rows (./is-row-error.ts: a value PostgreSQL cannot
 * hold, such as an amount above bigint or text with NUL; or a constraint the row breaks, such as a nonce
 * already used or an audit row another process wrote first) is sent again without it: its writes,
 * grouped by wallet, are halved until the row is found (each wallet's writes stay together and in order);
 * the row is refused with `rowRefused` set, the later writes of its wallet — queued ones too — are refused
 * with it (they decided on it), and every other write commits. Only that wallet's generation
 * (`generationOf`) moves on; one tenant's bad row costs the others a few statements, never their writes or
 * what they remember.
 * Does not defend: a caller that decides on a snapshot older than `generationOf` its wallet — callers check
 * it; a place that is never filled, which holds back its wallet's later writes for good — callers fill every
 * place they take, with the unsigned reservation when the signature failed.
 * Failed writes are refused with `ReservationBatchAborted` (carrying the cause); callers retry them alone,
 * except a row whose own values PostgreSQL cannot hold (`rowRefused` with a data exception), which would only
 * fail again.
 */
import type { Knex } from 'knex';
import { GroupCommitQueue } from './group-commit-queue.js';
import { isRowError } from './is-row-error.js';
import { StatementConnection } from './statement-connection.js';
import { jsonRowsEncoder, recordsetColumns } from './json-rows.js';

/** policy_decisions values, in DECISION_COLUMNS order. */
export type DecisionValues = [id: string, walletId: string, outcome: 'allow' | 'deny', kind: string, amountMicro: string, to: string, capability: string | null, violations: string, headroom: string, at: Date];
/** authorizations values, in AUTHORIZATION_COLUMNS order: `reserved` with no signature, or `signed` with its signature and time. */
export type AuthorizationValues = [
  id: string, walletId: string, decisionId: string, kind: string, scheme: string, network: string, asset: string, from: string, to: string, valueRaw: string, amountMicro: string,
  validAfter: string, validBefore: string, nonce: string, capability: string | null, resource: string | null, idempotencyKey: string | null, requestHash: string | null, response: string | object, actor: string, at: Date,
  status: 'reserved' | 'signed', signature: string | null, signedAt: Date | null,
];
/** audit_events values, in AUDIT_COLUMNS order. */
export type AuditValues = [chainKey: string, seq: number, eventType: string, actor: string, payload: string, prevHash: string, hash: string, at: Date];

export interface DecisionWrite {
  /** The wallet's advisory-lock key (decimal bigint): taken in shared mode for the statement. */
  lockKey: string;
  /**
   * A denial's `pd_…` row (policy_decisions holds denials: the decision a 403 names). An allowed payment's
   * decision is recorded by its authorization row and its audit row, which carry the same decision id.
   */
  decision?: DecisionValues;
  /** Present when the decision allowed the payment. */
  authorization?: AuthorizationValues;
  /** The spend counted in the wallet's day, week and month windows (window starts as YYYY-MM-DD). */
  spend?: { walletId: string; windowStarts: { day: string; week: string; month: string }; amountMicro: bigint };
  /**
   * The paying buyer PAT's spend that UTC day (YYYY-MM-DD), added to its daily total, and the daily cap the
   * decision enforced (null: none): the total is written with it, and a total above it fails the statement
   * (CHECK pat_spend_totals_within_cap).
   */
  patSpend?: { tokenId: string; day: string; amountMicro: bigint; capMicro: bigint | null };
  audit: AuditValues;
}

/** `write`'s authorization as signed: its response (holding the signature), status `signed`, the signature and when. */
export function signedWrite(write: DecisionWrite, response: object, signature: string, at: Date): DecisionWrite {
  if (!write.authorization) throw new Error('only an allowed decision takes a signature');
  const values = [...write.authorization] as AuthorizationValues;
  values[18] = response;
  values[21] = 'signed';
  values[22] = signature;
  values[23] = at;
  return { ...write, authorization: values };
}

/**
 * A write was not committed because its statement (or one queued before it) failed; retry it alone. With
 * `rowRefused`, PostgreSQL refused this write itself, sent apart from the others (`cause`: ./is-row-error.ts);
 * a data exception would only fail again.
 */
export class ReservationBatchAborted extends Error {
  constructor(
    override readonly cause: unknown,
    readonly rowRefused = false,
  ) {
    super(rowRefused ? 'PostgreSQL refused this write; nothing of it was written' : 'the statement holding this write failed; nothing in it was written');
    this.name = 'ReservationBatchAborted';
  }
}

const DECISION_COLUMNS = ['id', 'wallet_id', 'outcome', 'kind', 'amount_micro', 'to_address', 'capability', 'violations', 'headroom', 'created_at'];
const DECISION_TYPES = ['text', 'text', 'text', 'text', 'bigint', 'text', 'text', 'jsonb', 'jsonb', 'timestamptz'];
const AUTHORIZATION_COLUMNS = [
  'id', 'wallet_id', 'decision_id', 'kind', 'scheme', 'network', 'asset', 'from_address', 'to_address', 'value_raw', 'amount_micro',
  'valid_after', 'valid_before', 'nonce', 'capability', 'resource', 'idempotency_key', 'request_hash', 'response', 'actor', 'created_at', 'status', 'signature', 'signed_at',
];
const AUTHORIZATION_TYPES = [
  'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'numeric', 'bigint', 'bigint', 'bigint', 'text', 'text', 'text', 'text', 'text', 'jsonb', 'text', 'timestamptz', 'text', 'text', 'timestamptz',
];
const AUDIT_COLUMNS = ['chain_key', 'seq', 'event_type', 'actor', 'payload', 'prev_hash', 'hash', 'created_at'];
const AUDIT_TYPES = ['text', 'integer', 'text', 'text', 'jsonb', 'text', 'text', 'timestamptz'];
const SPEND_COLUMNS = ['wallet_id', 'window_kind', 'window_start', 'spent_micro', 'payment_count'];
const SPEND_TYPES = ['text', 'text', 'date', 'bigint', 'integer'];
const PAT_SPEND_COLUMNS = ['token_id', 'day', 'spent_micro', 'cap_micro'];
const PAT_SPEND_TYPES = ['text', 'date', 'bigint', 'bigint'];

const decisionRows = jsonRowsEncoder(DECISION_COLUMNS, DECISION_TYPES);
const authorizationRows = jsonRowsEncoder(AUTHORIZATION_COLUMNS, AUTHORIZATION_TYPES);
const spendRows = jsonRowsEncoder(SPEND_COLUMNS, SPEND_TYPES);
const patSpendRows = jsonRowsEncoder(PAT_SPEND_COLUMNS, PAT_SPEND_TYPES);
const auditRows = jsonRowsEncoder(AUDIT_COLUMNS, AUDIT_TYPES);

/** `SELECT <columns> FROM jsonb_to_recordset(?::jsonb) AS v(<column type>, …)`: one parameter per table (./json-rows.ts). */
const recordset = (columns: string[], types: string[]) => `SELECT ${columns.join(', ')} FROM jsonb_to_recordset(?::jsonb) AS v(${recordsetColumns(columns, types)})`;

/**
 * The audit rows are the statement's main query, joined to `l` (every wallet's shared advisory lock,
 * taken in key order before the first row is produced); the other inserts are CTEs, run to completion
 * after it. Spend totals arrive summed per (wallet, window) and PAT totals per (PAT, day), so ON CONFLICT touches each row once;
 * a PAT total carries the lowest cap among its writes (a cap lowered between two of them binds).
 */
export const DECISION_WRITE_SQL = `WITH l AS (SELECT count(*) AS locked FROM (SELECT pg_advisory_xact_lock_shared(k) FROM (SELECT DISTINCT unnest(?::bigint[]) AS k ORDER BY 1) s) x),
  d AS (INSERT INTO policy_decisions (${DECISION_COLUMNS.join(', ')}) ${recordset(DECISION_COLUMNS, DECISION_TYPES)}),
  a AS (INSERT INTO authorizations (${AUTHORIZATION_COLUMNS.join(', ')}) ${recordset(AUTHORIZATION_COLUMNS, AUTHORIZATION_TYPES)}),
  t AS (INSERT INTO wallet_spend_totals (${SPEND_COLUMNS.join(', ')})
        ${recordset(SPEND_COLUMNS, SPEND_TYPES)}
        ON CONFLICT (wallet_id, window_kind, window_start)
        DO UPDATE SET spent_micro = wallet_spend_totals.spent_micro + EXCLUDED.spent_micro,
                      payment_count = wallet_spend_totals.payment_count + EXCLUDED.payment_count),
  p AS (INSERT INTO pat_spend_totals (${PAT_SPEND_COLUMNS.join(', ')})
        ${recordset(PAT_SPEND_COLUMNS, PAT_SPEND_TYPES)}
        ON CONFLICT (token_id, day) DO UPDATE SET spent_micro = pat_spend_totals.spent_micro + EXCLUDED.spent_micro, cap_micro = EXCLUDED.cap_micro)
INSERT INTO audit_events (${AUDIT_COLUMNS.join(', ')}) SELECT v.* FROM (${recordset(AUDIT_COLUMNS, AUDIT_TYPES)}) v CROSS JOIN l`;
export const DECISION_WRITE_NAME = 'treasury_pay_decisions_v5';

/** The parameters of DECISION_WRITE_SQL for `writes` (a wallet's writes in chain order): lock keys, then one JSON document per table (in the statement's order). */
export function decisionWriteParams(writes: ReadonlyArray<DecisionWrite>): unknown[] {
  const spend = new Map<string, [walletId: string, kind: string, start: string, amount: bigint, count: number]>();
  const patSpend = new Map<string, [tokenId: string, day: string, amount: bigint, cap: bigint | null]>();
  for (const w of writes) {
    if (w.patSpend) {
      const { tokenId, day, amountMicro, capMicro } = w.patSpend;
      const key = `${tokenId}|${day}`;
      const row = patSpend.get(key) ?? [tokenId, day, 0n, capMicro];
      row[2] += amountMicro;
      if (capMicro !== null && (row[3] === null || capMicro < row[3])) row[3] = capMicro;
      patSpend.set(key, row);
    }
    if (!w.spend) continue;
    for (const kind of ['day', 'week', 'month'] as const) {
      const start = w.spend.windowStarts[kind];
      const key = `${w.spend.walletId}|${kind}|${start}`;
      const row = spend.get(key) ?? [w.spend.walletId, kind, start, 0n, 0];
      row[3] += w.spend.amountMicro;
      row[4] += 1;
      spend.set(key, row);
    }
  }
  return [
    writes.map((w) => w.lockKey),
    decisionRows(writes.flatMap((w) => (w.decision ? [w.decision] : []))),
    authorizationRows(writes.flatMap((w) => (w.authorization ? [w.authorization] : []))),
    spendRows([...spend.values()].map(([walletId, kind, start, amount, count]) => [walletId, kind, start, amount.toString(), count])),
    patSpendRows([...patSpend.values()].map(([tokenId, day, amount, cap]) => [tokenId, day, amount.toString(), cap?.toString() ?? null])),
    auditRows(writes.map((w) => w.audit)),
  ];
}

interface Pending {
  lockKey: string;
  /** Undefined while the decision's place is kept (WritePlace.fill hands it over). */
  write: DecisionWrite | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

/** A decision's place in the writer's queue, taken before its write exists. */
export interface WritePlace {
  /** Resolves once the write committed; rejects with ReservationBatchAborted if it was not written. */
  readonly committed: Promise<void>;
  /** Hands over the write (for the wallet whose lock key the place was taken with). Once only. */
  fill(write: DecisionWrite): void;
}

/** What one isolation found (ReservationWriter.isolate): the writes that committed and those refused, with why. */
interface Isolation {
  committed: Pending[];
  refused: Array<[Pending, ReservationBatchAborted]>;
  /** A statement failed for something other than a row (the connection, a timeout…): nothing after it was sent. */
  failed?: { err: unknown; unsent: Pending[] };
}

/** Wallets whose refused rows are remembered (generationOf); past this, the memory is cleared and `generation` moves on. */
const MAX_REMEMBERED_WALLETS = 10_000;

export class ReservationWriter {
  private readonly queue: GroupCommitQueue<Pending>;
  private readonly connection: StatementConnection;
  /** Moves on at every refusal; `generation` and each wallet's entry in `refusedAt` are values it took. */
  private epoch = 0;
  private failedAt = 0;
  private readonly refusedAt = new Map<string, number>();
  private readonly onIsolated: ((outcome: { refused: number; committed: number }) => void) | undefined;

  constructor(
    knex: Knex,
    options: {
      maxBatch?: number;
      onBatch?: (size: number) => void;
      onConnectionOpened?: () => void;
      /** After a statement failed because of a row and was sent again without it: writes refused for their own rows, and others committed. */
      onIsolated?: (outcome: { refused: number; committed: number }) => void;
    } = {},
  ) {
    this.connection = new StatementConnection(knex, { onOpen: options.onConnectionOpened });
    this.onIsolated = options.onIsolated;
    this.queue = new GroupCommitQueue((batch) => this.flush(batch), { maxBatch: options.maxBatch, onBatch: options.onBatch, isReady: (p) => p.write !== undefined, orderKey: (p) => p.lockKey });
  }

  /** Closes the writer's connection (./statement-connection.ts); later writes fail and are refused. */
  close(): Promise<void> {
    return this.connection.close();
  }

  /**
   * Moves on each time a statement fails as a whole: any state remembered under an older generation may be
   * wrong. A row refused for its own values moves only its wallet's generation (`generationOf`).
   */
  get generation(): number {
    return this.failedAt;
  }

  /** The generation of the wallet with `lockKey`: state of it remembered under another may be wrong. */
  generationOf(lockKey: string): number {
    return Math.max(this.failedAt, this.refusedAt.get(lockKey) ?? 0);
  }

  /** Resolves once `write` committed; rejects with ReservationBatchAborted if it was not written. */
  write(write: DecisionWrite): Promise<void> {
    const place = this.place(write.lockKey);
    place.fill(write);
    return place.committed;
  }

  /**
   * Takes a place in the queue for a decision of the wallet with `lockKey` whose write is handed over later;
   * the wallet's later writes are not sent before it. A place refused while still empty (a statement ahead
   * of it failed) rejects `committed` at once, and its later `fill` writes nothing.
   */
  place(lockKey: string): WritePlace {
    let pending!: Pending;
    const committed = new Promise<void>((resolve, reject) => {
      pending = { lockKey, write: undefined, resolve, reject };
    });
    committed.catch(() => undefined); // the caller may still be signing when a place is refused
    this.queue.push(pending);
    return {
      committed,
      fill: (write) => {
        if (pending.write) throw new Error('a write place is filled once');
        pending.write = write;
        this.queue.nudge();
      },
    };
  }

  private send(batch: Pending[]): Promise<unknown> {
    return this.connection.query(DECISION_WRITE_SQL, decisionWriteParams(batch.map((p) => p.write!)), DECISION_WRITE_NAME);
  }

  private async flush(batch: Pending[]): Promise<() => void> {
    let err: unknown;
    try {
      await this.send(batch);
      return () => {
        for (const p of batch) p.resolve();
      };
    } catch (e) {
      err = e;
    }
    if (!isRowError(err)) return () => this.failAll(batch, err);
    const found = await this.isolate(byWallet(batch), err);
    return () => {
      for (const p of found.committed) p.resolve();
      // The wallets of refused writes: what anyone decided on top of those writes is refused too, queued or not.
      const keys = new Set(found.refused.map(([p]) => p.lockKey));
      for (const key of keys) this.refusedAt.set(key, ++this.epoch);
      if (this.refusedAt.size > MAX_REMEMBERED_WALLETS) {
        this.refusedAt.clear();
        this.failedAt = ++this.epoch;
      }
      for (const [p, reason] of found.refused) p.reject(reason);
      for (const p of this.queue.takeQueued((q) => keys.has(q.lockKey))) p.reject(new ReservationBatchAborted(found.refused.find(([r]) => r.lockKey === p.lockKey)![1].cause));
      this.onIsolated?.({ refused: found.refused.filter(([, reason]) => reason.rowRefused).length, committed: found.committed.length });
      if (found.failed) this.failAll(found.failed.unsent, found.failed.err);
    };
  }

  /** Refuses `batch` and everything queued behind it (they may have decided on what it would have written); every remembered state is stale. */
  private failAll(batch: Pending[], err: unknown): void {
    this.failedAt = ++this.epoch;
    for (const p of [...batch, ...this.queue.takeQueued()]) p.reject(new ReservationBatchAborted(err));
  }

  /**
   * `groups` (each one wallet's writes, in chain order) failed together because of some row (`err`):
   * sends halves of them apart until each refused row is found. A wallet whose writes failed on their own is
   * sent write by write, in order: its first write PostgreSQL refuses is refused for its values, and its
   * later writes with it (they were decided on it); the ones before it commit.
   */
  private async isolate(groups: Pending[][], err: unknown): Promise<Isolation> {
    const out: Isolation = { committed: [], refused: [] };
    const pending = [{ groups, err }];
    while (pending.length > 0) {
      const { groups: part, err: partErr } = pending.shift()!;
      if (out.failed) {
        out.failed.unsent.push(...part.flat());
        continue;
      }
      if (part.length > 1) {
        const half = Math.ceil(part.length / 2);
        for (const side of [part.slice(0, half), part.slice(half)]) {
          if (out.failed) {
            out.failed.unsent.push(...side.flat());
            continue;
          }
          const sent = await this.trySend(side.flat());
          if (sent === undefined) out.committed.push(...side.flat());
          else if (isRowError(sent)) pending.push({ groups: side, err: sent });
          else out.failed = { err: sent, unsent: side.flat() };
        }
        continue;
      }
      // One wallet's writes, which failed on their own (`partErr`): sent one by one, in order.
      const writes = part[0]!;
      if (writes.length === 1) {
        out.refused.push([writes[0]!, new ReservationBatchAborted(partErr, true)]);
        continue;
      }
      for (let i = 0; i < writes.length; i++) {
        const sent = await this.trySend([writes[i]!]);
        if (sent === undefined) {
          out.committed.push(writes[i]!);
          continue;
        }
        if (!isRowError(sent)) {
          out.failed = { err: sent, unsent: writes.slice(i) };
          break;
        }
        out.refused.push([writes[i]!, new ReservationBatchAborted(sent, true)]);
        for (const later of writes.slice(i + 1)) out.refused.push([later, new ReservationBatchAborted(sent)]);
        break;
      }
    }
    return out;
  }

  /** Sends `batch`; undefined once committed, otherwise why it failed. */
  private async trySend(batch: Pending[]): Promise<unknown> {
    try {
      await this.send(batch);
      return undefined;
    } catch (err) {
      return err ?? new Error('statement failed');
    }
  }
}

/** `batch` grouped by wallet (lock key), each wallet's writes in their order, wallets in order of first appearance. */
function byWallet(batch: Pending[]): Pending[][] {
  const groups = new Map<string, Pending[]>();
  for (const p of batch) {
    const group = groups.get(p.lockKey);
    if (group) group.push(p);
    else groups.set(p.lockKey, [p]);
  }
  return [...groups.values()];
}
