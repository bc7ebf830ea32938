/**
 * The signer's store on PostgreSQL (./owner-policy-store.ts says what it keeps): its own database, reached with
 * credentials only the signer process holds (TREASURY_SIGNER_DATABASE_URL), migrated by the signer at start
 * (./signer-store-schema.ts). Several signer processes may share it: every decision about a wallet runs in one
 * transaction under the wallet row's lock (SELECT … FOR UPDATE, rows locked in address order), as the API shares
 * its own database. Payment spends are group-committed (./spend-batcher.ts).
 *
 * Defends: a spend lost on a crash — `reserveSpend` resolves only after the transaction holding the spend
 * committed, so a signature made after it is always counted, even if the process dies before the reply; two
 * batches deadlocking (locks in one order); bind values in logs (statements carry placeholders only; pg's errors
 * name no value).
 * Does not defend: a database the front can write (deploy it with its own role: docs/deploy-hsm.md).
 */
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import pg from 'pg';
import { getAddress } from 'viem';
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import type { PolicyAuthority } from '../protocol/owner-policy-protocol.js';
import type {
  OwnerPolicyStore,
  Spend,
  SpendQuery,
  SpendVerdict,
  StoredPolicy,
  WalletRecord,
} from './owner-policy-store.js';
import { SIGNER_MIGRATIONS } from './signer-store-schema.js';
import { SpendBatcher } from './spend-batcher.js';

interface WalletRow {
  address: string;
  authority_kind: PolicyAuthority['kind'] | null;
  authority_address: string | null;
  policy: WalletPolicy | null;
  policy_version: string | null;
  policy_hash: string | null;
  policy_issued_at: string | null;
  policy_signature: string | null;
}

const WALLET_COLUMNS =
  'address, authority_kind, authority_address, policy, policy_version, policy_hash, policy_issued_at, policy_signature';

/** An authority's address as the protocol spells it: EIP-55 for 0x addresses, base58 (case-sensitive) as it is. */
const checksummed = (address: string | null) =>
  address === null ? null : address.startsWith('0x') ? getAddress(address) : address;
/** An authority's address as the store keeps it: 0x lower-case, base58 as it is. */
const storedAuthority = (address: string) => (address.startsWith('0x') ? address.toLowerCase() : address);

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
  return { authority, current };
}

type Outcome =
  | { kind: 'recorded'; id: string }
  | { kind: 'refused'; refusal: unknown }
  | { kind: 'unrecorded' }
  | { kind: 'failed'; error: unknown };

interface SpendEntry {
  spend: Spend;
  query: (policy: WalletPolicy) => SpendQuery;
  decide: (current: StoredPolicy | null, state: SpendState | null) => SpendVerdict<unknown>;
}

type StateQuery = SpendQuery & { since: Date };

/** The spend state of each wallet (by its first entry's windows), summed by one statement over its spends. */
async function readSpendStates(client: pg.PoolClient, queries: StateQuery[]): Promise<Map<string, SpendState>> {
  const column = (pick: (q: StateQuery) => unknown) => queries.map(pick);
  const { rows } = await client.query<{
    address: string;
    day: string;
    week: string;
    month: string;
    recent: string;
    last: Date | null;
  }>(
    `SELECT q.address,
            coalesce(sum(s.amount) FILTER (WHERE s.signed_at >= q.day_start), 0)::text AS day,
            coalesce(sum(s.amount) FILTER (WHERE s.signed_at >= q.week_start), 0)::text AS week,
            coalesce(sum(s.amount) FILTER (WHERE s.signed_at >= q.month_start), 0)::text AS month,
            count(s.id) FILTER (WHERE s.signed_at > q.velocity_start AND s.amount > 0)::text AS recent,
            max(s.signed_at) FILTER (WHERE s.amount > 0) AS last
       FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
              AS q(address, day_start, week_start, month_start, velocity_start, since)
       LEFT JOIN signer_spends s ON s.address = q.address AND s.signed_at >= q.since
      GROUP BY q.address`,
    [
      column((q) => q.address.toLowerCase()),
      column((q) => q.dayStart),
      column((q) => q.weekStart),
      column((q) => q.monthStart),
      column((q) => q.velocityStart ?? new Date(8.64e15)),
      column((q) => q.since),
    ],
  );
  return new Map(
    rows.map((r) => [
      r.address,
      {
        dailySpentMicro: BigInt(r.day),
        weeklySpentMicro: BigInt(r.week),
        monthlySpentMicro: BigInt(r.month),
        recentCount: Number(r.recent),
        lastPaymentAt: r.last,
      },
    ]),
  );
}

/** A wallet's state after one more spend of `amount` at `at` (the next entry of the same batch decides on it). */
function withSpend(state: SpendState, amount: bigint, at: Date): SpendState {
  return {
    dailySpentMicro: state.dailySpentMicro + amount,
    weeklySpentMicro: state.weeklySpentMicro + amount,
    monthlySpentMicro: state.monthlySpentMicro + amount,
    recentCount: state.recentCount + (amount > 0n ? 1 : 0),
    lastPaymentAt: amount > 0n ? at : state.lastPaymentAt,
  };
}

export interface PgOwnerPolicyStoreOptions {
  connectionString: string;
  poolMax: number;
  /** How far back the last payment is looked for (the longest cooling-off a policy may set). */
  lookBackSeconds: number;
}

export class PgOwnerPolicyStore implements OwnerPolicyStore {
  private readonly pool: pg.Pool;
  private readonly batcher: SpendBatcher<SpendEntry, Outcome>;

  constructor(private readonly options: PgOwnerPolicyStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolMax,
      application_name: 'treasury-signer',
    });
    // An idle client's error (the server went away) must not crash the signer: the next query reports it.
    this.pool.on('error', () => undefined);
    this.batcher = new SpendBatcher((entries) => this.runBatch(entries), {
      maxInFlight: Math.max(1, Math.min(4, options.poolMax - 1)),
      maxBatch: 128,
    });
  }

  async prepare(): Promise<void> {
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
  }

  async recordAccount(accountKeyHash: string, authority: PolicyAuthority, proof: string | null): Promise<void> {
    await this.pool.query(
      `INSERT INTO signer_accounts (account_key_hash, authority_kind, authority_address, proof)
       VALUES ($1, $2, $3, $4) ON CONFLICT (account_key_hash) DO NOTHING`,
      [accountKeyHash, authority.kind, authority.kind === 'owner' ? storedAuthority(authority.address!) : null, proof],
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
    await this.pool.query(
      `INSERT INTO signer_wallets (address, account_key_hash, authority_kind, authority_address)
       VALUES ($1, $2, $3, $4) ON CONFLICT (address) DO NOTHING`,
      [
        address.toLowerCase(),
        accountKeyHash,
        authority?.kind ?? null,
        authority?.address ? storedAuthority(authority.address) : null,
      ],
    );
  }

  async wallet(address: string): Promise<WalletRecord | undefined> {
    const { rows } = await this.pool.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = $1`,
      [address.toLowerCase()],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async setPolicy(
    address: string,
    decide: (record: WalletRecord) => { authority: PolicyAuthority; policy: StoredPolicy },
  ): Promise<{ authority: PolicyAuthority; policy: StoredPolicy }> {
    const key = address.toLowerCase();
    return this.transaction(async (client) => {
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
        [key, authority.kind, authority.kind === 'approver' ? null : storedAuthority(authority.address!), ...document],
      );
      await client.query(
        `INSERT INTO signer_policy_history
                (address, policy, version, policy_hash, issued_at, signature, authority_kind, authority_address)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [key, ...document, authority.kind, storedAuthority(authority.address!)],
      );
      return decided;
    });
  }

  reserveSpend<R>(
    spend: Spend,
    query: (policy: WalletPolicy) => SpendQuery,
    decide: (current: StoredPolicy | null, state: SpendState | null) => SpendVerdict<R>,
  ): Promise<{ kind: 'recorded'; id: string } | { kind: 'refused'; refusal: R } | { kind: 'unrecorded' }> {
    return this.batcher.submit({ spend, query, decide }).then((outcome) => {
      // A decision that threw fails its own request only, never the others of its batch.
      if (outcome.kind === 'failed') throw outcome.error;
      return outcome as { kind: 'recorded'; id: string } | { kind: 'refused'; refusal: R } | { kind: 'unrecorded' };
    });
  }

  async giveBack(id: string): Promise<void> {
    await this.pool.query('DELETE FROM signer_spends WHERE ref = $1', [id]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** One batch of spends in one transaction: lock the wallets, read their states, decide in order, insert, commit. */
  private runBatch(entries: SpendEntry[]): Promise<Outcome[]> {
    return this.transaction(async (client) => {
      const addresses = [...new Set(entries.map((e) => e.spend.address.toLowerCase()))].sort();
      const { rows } = await client.query<WalletRow>(
        `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = ANY($1::text[]) ORDER BY address FOR UPDATE`,
        [addresses],
      );
      const records = new Map(rows.map((r) => [r.address, toRecord(r)]));
      const queries = this.stateQueries(entries, records);
      const states = queries.length > 0 ? await readSpendStates(client, queries) : new Map<string, SpendState>();
      const inserts: Array<[string, string, string, string, Date]> = [];
      const outcomes = entries.map((e) => decideEntry(e, records, states, inserts));
      if (inserts.length > 0) {
        const col = (i: number) => inserts.map((row) => row[i]);
        await client.query(
          `INSERT INTO signer_spends (ref, address, amount, payee, signed_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::text[], $5::timestamptz[])`,
          [col(0), col(1), col(2), col(3), col(4)],
        );
      }
      return outcomes;
    });
  }

  /** What to sum for each wallet of the batch that has a signed policy, by its first entry's windows. */
  private stateQueries(entries: SpendEntry[], records: Map<string, WalletRecord>): StateQuery[] {
    const lookBackMs = this.options.lookBackSeconds * 1000;
    const queries = new Map<string, StateQuery>();
    for (const e of entries) {
      const key = e.spend.address.toLowerCase();
      const current = records.get(key)?.current;
      if (!current || queries.has(key)) continue;
      const q = e.query(current.policy);
      const starts = [
        q.dayStart,
        q.weekStart,
        q.monthStart,
        q.velocityStart,
        new Date(e.spend.at.getTime() - lookBackMs),
      ];
      const since = new Date(Math.min(...starts.flatMap((d) => (d ? [d.getTime()] : []))));
      queries.set(key, { ...q, address: key, since });
    }
    return [...queries.values()];
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

/** One entry's outcome, in batch order; a recorded spend joins the inserts and the wallet's state. */
function decideEntry(
  e: SpendEntry,
  records: Map<string, WalletRecord>,
  states: Map<string, SpendState>,
  inserts: Array<[string, string, string, string, Date]>,
): Outcome {
  const key = e.spend.address.toLowerCase();
  const record = records.get(key);
  if (!record) return { kind: 'unrecorded' };
  const state = record.current ? states.get(key)! : null;
  let verdict: SpendVerdict<unknown>;
  try {
    verdict = e.decide(record.current, state);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (!verdict.record) return { kind: 'refused', refusal: verdict.refusal };
  if (state) states.set(key, withSpend(state, e.spend.amount, e.spend.at));
  const ref = randomBytes(16).toString('hex');
  inserts.push([ref, key, e.spend.amount.toString(), e.spend.payee.toLowerCase(), e.spend.at]);
  return { kind: 'recorded', id: ref };
}
