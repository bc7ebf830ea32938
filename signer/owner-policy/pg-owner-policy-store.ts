/**
 * The signer's store on PostgreSQL (./owner-policy-store.ts says what it keeps): its own database, reached with
 * credentials only the signer process holds (TREASURY_SIGNER_DATABASE_URL), migrated by the signer at start
 * (./signer-store-schema.ts). Several signer processes may share it, as the API's replicas share the API's
 * database: `setPolicy` runs in one transaction under the wallet row's lock (SELECT … FOR UPDATE); payment spends
 * are group-committed (./spend-batcher.ts) by ./spend-batch.ts — one statement for wallets without a signed
 * policy, a decision on a snapshot committed only if the wallet's policy version and spend counter still hold for
 * the others (./signed-spends.ts).
 *
 * Defends: a spend lost on a crash — for a wallet with a signed policy (and for one without, when this process holds
 * no lease on it: ./open-spend-leases.ts) `reserveSpend` resolves only after the statement or transaction holding
 * the spend committed, so a signature made after it is always counted, even if the process dies before the reply;
 * a policy answered while another process holds a lease (set_wallet_policy waits one lease before it
 * answers);
 * two batches deadlocking (rows locked in address order); bind values in logs (statements carry placeholders
 * only; pg's errors name no value).
 * A store restored from an older snapshot: every write that binds trust (an account's authority, a wallet recorded,
 * a signed policy accepted) raises the store's generation in its transaction, checked against the highest this process
 * saw and, at start, against the watermark file (./store-generation.ts, ./store-watermark.ts); a database holding the
 * API's tables is refused before migrating (./store-placement.ts).
 * Does not defend: a database the front can write (deploy it with its own role: docs/deploy-hsm.md); the spends of
 * wallets without a signed policy still queued when the process dies (docs/adr/0012, "recorded after release"; at a
 * clean shutdown those the store refused are logged: ./final-spend-flush.ts);
 * the spends a restored store forgot (spends do not raise the generation: ./store-generation.ts).
 */
import knexFactory from 'knex';
import pg from 'pg';
import { counterpartyKey, displayCounterparty } from '../../policy/counterparty-address.js';
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import type { PolicyAuthority } from '../protocol/owner-policy-protocol.js';
import type {
  OwnerPolicyStore,
  Reservation,
  ReservedSpend,
  Spend,
  SpendQuery,
  SpendVerdict,
  StoredPolicy,
  WalletRecord,
} from './owner-policy-store.js';
import { SIGNER_MIGRATIONS } from './signer-store-schema.js';
import { runSpendBatch, type Outcome, type SpendBatchContext, type SpendEntry } from './spend-batch.js';
import { PolicyCache, type SpendStateSource } from './signed-spends.js';
import { SpendBatcher } from './spend-batcher.js';
import { nextSpendRef } from './spend-refs.js';
import { foresee, UnresolvedSpends } from './spend-foresight.js';
import { SpendStateCache } from './spend-state-cache.js';
import {
  insertLockedSpends,
  policyChangesSince,
  recordOpenSpends,
  WALLET_COLUMNS,
  type SpendRow,
  type WalletRow,
} from './spend-statements.js';
import { OpenSpendLeases } from './open-spend-leases.js';
import { flushBeforeClose, reportLostSpends } from './final-spend-flush.js';
import { readStoreGeneration, StoreGenerations, type GenerationWatermark, type StoreLog } from './store-generation.js';
import type { StorePlacementRules } from '../config/owner-policy-config.js';
import { checkStorePlacement } from './store-placement.js';
import { WalletTurns } from './wallet-turns.js';

/**
 * Every address (wallet, payee, authority) as the store keeps it: 0x lower-case, base58 (case-sensitive) as it is;
 * and as the protocol spells it: EIP-55 for 0x addresses, base58 as it is.
 */
const stored = counterpartyKey;
const checksummed = (address: string | null) => (address === null ? null : displayCounterparty(address));
/** A statement that made its row (an account or wallet recorded now, not already on record): it binds trust. */
const inserted = (result: pg.QueryResult) => result.rowCount === 1;

function toRecord(row: WalletRow): WalletRecord {
  const authority =
    row.authority_kind === null ? null : { kind: row.authority_kind, address: checksummed(row.authority_address) };
  const current =
    row.policy === null
      ? null
      : {
          policy: row.policy,
          version: Number(row.policy_version),
          policyHash: row.policy_hash!,
          issuedAt: Number(row.policy_issued_at),
          signature: row.policy_signature!,
        };
  return { authority, current, underAccount: row.under_account };
}

/** A spend queued this long before its write still gives a lease from the write (./open-spend-leases.ts `rowAgeMs`). */
const OPEN_ROW_AGE_MS = 1000;
/** Spends recorded after release wait this long for company before they are written. */
const OPEN_FLUSH_DELAY_MS = 20;
/**
 * How long a batch of spends whose signatures are still being made may gather (./spend-batcher.ts): at most this is
 * added to a commit that the HSM's queue would otherwise outrun.
 */
const GATHER_MS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PgOwnerPolicyStoreOptions {
  connectionString: string;
  poolMax: number;
  /**
   * How long the store's word that a wallet has no policy lets this process record its spends after release
   * (./open-spend-leases.ts), and how long set_wallet_policy waits for other processes' leases to run out; 0: never.
   * Every signer process sharing a store must use the same value.
   */
  openSpendLeaseMs: number;
  /** How far back the last payment is looked for (the longest cooling-off a policy may set). */
  lookBackSeconds: number;
  /** Told how many signed wallets' states a batch decided on, by source (./spend-state-cache.ts). */
  decidedOn?: (source: SpendStateSource, wallets: number) => void;
  /** The highest store generation seen, kept outside the store (./store-watermark.ts); unset: this process's only. */
  watermark?: GenerationWatermark;
  /** Told of a superuser role, a store rolled back, a watermark not written. */
  log?: StoreLog;
  /** What ./store-placement.ts holds other roles to: the configuration's (../config/owner-policy-config.ts). */
  placement: StorePlacementRules;
}

export class PgOwnerPolicyStore implements OwnerPolicyStore {
  private readonly pool: pg.Pool;
  private readonly batcher: SpendBatcher<SpendEntry, Outcome>;
  private readonly batchContext: SpendBatchContext;
  private readonly openSpends: OpenSpendLeases;
  private readonly unresolved = new UnresolvedSpends();
  private readonly generations: StoreGenerations;
  /** The rows of the last write of spends recorded after release, until it committed: what a failed one left. */
  private unwritten: readonly SpendRow[] = [];

  constructor(private readonly options: PgOwnerPolicyStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolMax,
      application_name: 'treasury-signer',
    });
    // An idle client's error (the server went away) must not crash the signer: the next query reports it.
    this.pool.on('error', () => undefined);
    this.generations = new StoreGenerations({ watermark: options.watermark, log: options.log });
    this.openSpends = new OpenSpendLeases({
      recordOpen: (rows) => this.unconfirmed(rows, recordOpenSpends(this.pool, rows)),
      recordAnyway: (rows) => this.unconfirmed(rows, insertLockedSpends(this.pool, rows)),
      changedSince: (since) => policyChangesSince(this.pool, since),
      leaseMs: options.openSpendLeaseMs,
      rowAgeMs: OPEN_ROW_AGE_MS,
      flushDelayMs: OPEN_FLUSH_DELAY_MS,
    });
    this.batchContext = {
      pool: this.pool,
      lookBackMs: options.lookBackSeconds * 1000,
      // A wallet read with a policy is never held open again, whatever the feed of changes said (or missed).
      policies: new PolicyCache((address) => this.openSpends.hasPolicy(address)),
      states: new SpendStateCache(),
      decidedOn: options.decidedOn,
      turns: new WalletTurns(),
      transaction: (run) => this.transaction(run),
      toRecord,
      recordedOpen: (address, sentAt, rows) => this.openSpends.renew(address, sentAt, rows),
    };
    // One batch at a time: the next gathers while it runs. Every batch costs the same round trips whatever its
    // size, and a hot wallet's batches take turns (./wallet-turns.ts): a second batch in flight started with the
    // one or two payments that arrived first and waited for the wallet's turn all the same — measured with
    // `npm run bench:signer`, 16 % fewer signatures a second on a signed wallet than one at a time
    // (docs/performance.md, "The signer's second check, round two").
    this.batcher = new SpendBatcher((entries) => this.runBatch(entries), {
      maxInFlight: 1,
      maxBatch: 128,
      gatherMs: GATHER_MS,
    });
  }

  async prepare(): Promise<void> {
    await checkStorePlacement(this.pool, this.options.log, this.options.placement);
    const knex = knexFactory({ client: 'pg', connection: this.options.connectionString, pool: { min: 0, max: 1 } });
    try {
      await knex.migrate.latest({
        migrationSource: SIGNER_MIGRATIONS,
        tableName: 'signer_migrations',
        disableMigrationsListValidation: true,
      });
    } finally {
      await knex.destroy();
    }
    await this.generations.start(await readStoreGeneration(this.pool));
    if (this.options.openSpendLeaseMs > 0) this.openSpends.watchChanges((await policyChangesSince(this.pool, '0')).seq);
  }

  async recordAccount(accountKeyHash: string, authority: PolicyAuthority, proof: string | null): Promise<void> {
    await this.binding(
      (client) =>
        client.query(
          `INSERT INTO signer_accounts (account_key_hash, authority_kind, authority_address, proof)
           VALUES ($1, $2, $3, $4) ON CONFLICT (account_key_hash) DO NOTHING`,
          [accountKeyHash, authority.kind, authority.kind === 'owner' ? stored(authority.address!) : null, proof],
        ),
      inserted,
    );
  }

  async accountAuthority(accountKeyHash: string): Promise<PolicyAuthority | undefined> {
    const { rows } = await this.pool.query<{ authority_kind: 'owner' | 'approver'; authority_address: string | null }>(
      'SELECT authority_kind, authority_address FROM signer_accounts WHERE account_key_hash = $1',
      [accountKeyHash],
    );
    const row = rows[0];
    return row ? { kind: row.authority_kind, address: checksummed(row.authority_address) } : undefined;
  }

  async recordWallet(address: string, accountKeyHash: string, authority: PolicyAuthority | null): Promise<void> {
    const key = stored(address);
    const sentAt = performance.now();
    const { rowCount } = await this.binding(
      (client) =>
        client.query(
          `INSERT INTO signer_wallets (address, account_key_hash, authority_kind, authority_address)
           VALUES ($1, $2, $3, $4) ON CONFLICT (address) DO NOTHING`,
          [key, accountKeyHash, authority?.kind ?? null, authority?.address ? stored(authority.address) : null],
        ),
      inserted,
    );
    // A row this statement made has no policy: the store's word, as a spend statement's, for a wallet's first payment.
    if (rowCount === 1 && this.options.openSpendLeaseMs > 0) this.openSpends.renew(key, sentAt);
  }

  async wallet(address: string): Promise<WalletRecord | undefined> {
    const { rows } = await this.pool.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = $1`,
      [stored(address)],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async setPolicy(
    address: string,
    decide: Parameters<OwnerPolicyStore['setPolicy']>[1],
  ): Promise<{ authority: PolicyAuthority; policy: StoredPolicy }> {
    const key = stored(address);
    // This process's spends of the wallet recorded after release are written first, and no more are (until done).
    const resume = this.openSpends.suspend(key);
    try {
      await this.openSpends.flush();
      const kept = await this.binding(
        (client, raise) => this.storePolicy(client, key, decide, raise),
        () => true,
      );
      // Every other process's lease on the wallet (its own, or its last read of policy changes) began before this
      // commit: each has run out before the answer.
      await sleep(this.options.openSpendLeaseMs);
      // A hint for this process's next payment on the wallet (every commit checks the version against the row).
      this.batchContext.policies.set(key, kept.policy);
      return kept;
    } finally {
      resume();
    }
  }

  /** set_wallet_policy under the row lock; `raise` raises the store's generation (`binding`). */
  private async storePolicy(
    client: pg.PoolClient,
    key: string,
    decide: Parameters<OwnerPolicyStore['setPolicy']>[1],
    raise: () => Promise<void>,
  ): Promise<{ authority: PolicyAuthority; policy: StoredPolicy }> {
    // The counter before the row, as every statement of the store takes them (./spend-statements.ts `lockWallets`).
    await client.query('SELECT 1 FROM signer_spend_counters WHERE address = $1 FOR UPDATE', [key]);
    await client.query('INSERT INTO signer_wallets (address) VALUES ($1) ON CONFLICT (address) DO NOTHING', [key]);
    const { rows } = await client.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = $1 FOR UPDATE`,
      [key],
    );
    const decided = decide(toRecord(rows[0]!));
    const { authority, policy } = decided;
    const document = [
      JSON.stringify(policy.policy),
      policy.version,
      policy.policyHash.toLowerCase(),
      policy.issuedAt,
      policy.signature.toLowerCase(),
    ];
    // An approver's address is read from the signer's configuration each time: only owners' are pinned here.
    await client.query(
      `UPDATE signer_wallets SET authority_kind = $2, authority_address = $3, policy = $4, policy_version = $5,
              policy_hash = $6, policy_issued_at = $7, policy_signature = $8, updated_at = now()
        WHERE address = $1`,
      [key, authority.kind, authority.kind === 'approver' ? null : stored(authority.address!), ...document],
    );
    // A decision made on the policy this one replaces fails its commit's check (./spend-statements.ts).
    await client.query(
      `INSERT INTO signer_spend_counters (address) VALUES ($1)
       ON CONFLICT (address) DO UPDATE SET spend_seq = signer_spend_counters.spend_seq + 1`,
      [key],
    );
    // The generation's row lock, held until the commit, before the history row takes its number (`seq`): every
    // history row is numbered under it, so the numbers follow the commits, and a process's read of the policies
    // accepted since a number (./open-spend-leases.ts) never passes one still to commit. Numbered first, a policy
    // could commit after a later-numbered one that a read had already passed: its wallet stayed known open there.
    // The insert waits for nothing (the wallet's row is locked above): the generation is still held only till commit.
    await raise();
    await client.query(
      `INSERT INTO signer_policy_history (address, policy, version, policy_hash, issued_at, signature, authority_kind,
              authority_address, signature_form) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [key, ...document, authority.kind, stored(decided.signedBy), decided.form ?? 'policy_hash'],
    );
    return decided;
  }

  reserveSpend<R>(
    spend: Spend,
    query: (policy: WalletPolicy) => SpendQuery,
    decide: (current: StoredPolicy, state: SpendState) => SpendVerdict<R>,
  ): Reservation<R> {
    const key = stored(spend.address);
    if (this.options.openSpendLeaseMs > 0 && !this.batchContext.policies.get(key) && this.openSpends.holds(key)) {
      // No signed policy, as the store said less than a lease ago: recorded after release (./open-spend-leases.ts).
      const id = nextSpendRef();
      this.openSpends.enqueue([id, key, spend.amount.toString(), stored(spend.payee), spend.at]);
      return { foreseen: false, outcome: Promise.resolve({ kind: 'recorded', id, signed: false }) };
    }
    const entry: SpendEntry = { spend, query, decide };
    // Foreseen on the spends unresolved before this one, which then joins them until its batch resolves.
    const foreseen = foresee(this.batchContext, entry, this.unresolved.of(key));
    const resolved = this.unresolved.add(key, spend);
    const outcome = this.batcher
      .submit(entry)
      .finally(resolved)
      .then((decided) => {
        // A decision that threw fails its own request only, never the others of its batch.
        if (decided.kind === 'failed') throw decided.error;
        return decided as ReservedSpend<R>;
      });
    return { foreseen, outcome, waitFor: (running) => this.batcher.waitFor(entry, running) };
  }

  async giveBack(id: string): Promise<void> {
    if (await this.openSpends.giveBack(id)) return;
    await this.pool.query('DELETE FROM signer_spends WHERE ref = $1', [id]);
  }

  /** The spends recorded after release still queued, written (./final-spend-flush.ts: retried, lost ones logged). */
  async close(): Promise<void> {
    this.openSpends.close();
    const { tries, error } = await flushBeforeClose(
      () => this.openSpends.flush(),
      () => this.openSpends.close(),
    );
    if (error !== undefined) reportLostSpends(this.unwritten, tries, error, this.options.log);
    await this.pool.end();
  }

  /** `write` of queued spends' `rows`: they count as unwritten until it resolves (`close`). */
  private async unconfirmed<T>(rows: readonly SpendRow[], write: Promise<T>): Promise<T> {
    this.unwritten = rows;
    const result = await write;
    this.unwritten = [];
    return result;
  }

  private runBatch(entries: SpendEntry[]): Promise<Outcome[]> {
    return runSpendBatch(this.batchContext, entries);
  }

  /**
   * A write that binds trust: `run`, then (when `bound` says it bound something) the store's generation raised
   * as the transaction's last statement (./store-generation.ts: refused when the store went back under what this
   * process saw), the commit, and the watermark told. `run` may raise it earlier itself (`raise`, once), for its last
   * statements to run under the generation's lock (`storePolicy`).
   */
  private async binding<T>(
    run: (client: pg.PoolClient, raise: () => Promise<void>) => Promise<T>,
    bound: (result: T) => boolean,
  ): Promise<T> {
    let generation: number | undefined;
    const result = await this.transaction(async (client) => {
      const raise = async () => {
        if (generation === undefined) generation = await this.generations.raise(client);
      };
      const done = await run(client, raise);
      if (bound(done)) await raise();
      return done;
    });
    if (generation !== undefined) await this.generations.committed(generation);
    return result;
  }

  private async transaction<T>(run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await run(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
