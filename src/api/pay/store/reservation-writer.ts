/**
 * Writes pay-path decisions — a denial (decision row + audit row) or an allowed payment (authorization,
 * either already signed or reserved with no signature yet, spend totals, the paying buyer PAT's daily total,
 * audit row; the authorization and the audit row carry its decision id) —
 * several to one autocommit statement when payments arrive together (./group-commit-queue.ts): a write is
 * sent at once when no statement is running, otherwise it joins the next one. One prepared `INSERT …
 * SELECT FROM jsonb_to_recordset(…)` statement (./decision-write.ts: one JSON document per table written, one
 * shape per combination of tables) serves one write or hundreds, and the same statement is what a single
 * write runs on its own. Statements run on the
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
import { decisionWriteStatement, type DecisionWrite } from './decision-write.js';
import { isRowError } from './is-row-error.js';
import { StatementConnection } from './statement-connection.js';

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
    super(
      rowRefused
        ? 'PostgreSQL refused this write; nothing of it was written'
        : 'the statement holding this write failed; nothing in it was written',
    );
    this.name = 'ReservationBatchAborted';
  }
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
    this.queue = new GroupCommitQueue((batch) => this.flush(batch), {
      maxBatch: options.maxBatch,
      onBatch: options.onBatch,
      isReady: (p) => p.write !== undefined,
      orderKey: (p) => p.lockKey,
    });
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
    const { sql, params, name } = decisionWriteStatement(batch.map((p) => p.write!));
    return this.connection.query(sql, params, name);
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
      for (const p of this.queue.takeQueued((q) => keys.has(q.lockKey)))
        p.reject(new ReservationBatchAborted(found.refused.find(([r]) => r.lockKey === p.lockKey)![1].cause));
      this.onIsolated?.({
        refused: found.refused.filter(([, reason]) => reason.rowRefused).length,
        committed: found.committed.length,
      });
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
