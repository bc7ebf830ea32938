/**
 * The signer's store on PostgreSQL (./owner-policy-store.ts says what it keeps): its own database, reached with
 * credentials only the signer process holds (TREASURY_SIGNER_DATABASE_URL), migrated by the signer at start
 * (./signer-store-schema.ts). Several signer processes may share it: every decision about a wallet runs in one
 * transaction under the wallet row's lock (SELECT … FOR UPDATE), as the API shares its own database.
 *
 * Defends: a spend lost on a crash — `reserveSpend` commits the spend before it resolves, so a signature made
 * after it is always counted, even if the process dies before the reply; bind values in logs (knex's
 * `compileSqlOnError: false`: a failed statement is named with its placeholders only).
 * Does not defend: a database the front can write (deploy it with its own role: docs/deploy-hsm.md).
 */
import knexFactory, { type Knex } from 'knex';
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

interface WalletRow {
  authority_kind: PolicyAuthority['kind'] | null;
  authority_address: string | null;
  policy: WalletPolicy | null;
  policy_version: string | null;
  policy_hash: string | null;
  policy_issued_at: string | null;
  policy_signature: string | null;
}

const WALLET_COLUMNS = [
  'authority_kind',
  'authority_address',
  'policy',
  'policy_version',
  'policy_hash',
  'policy_issued_at',
  'policy_signature',
] as const;

function toRecord(row: WalletRow): WalletRecord {
  const authority = row.authority_kind === null ? null : { kind: row.authority_kind, address: row.authority_address };
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

/** The spend state of `query`, summed by one statement over the wallet's spends since the earliest window. */
async function readSpendState(trx: Knex.Transaction, query: SpendQuery, lookBackFrom: Date): Promise<SpendState> {
  const since = [query.dayStart, query.weekStart, query.monthStart, query.velocityStart ?? query.dayStart, lookBackFrom]
    .map((d) => d.getTime())
    .reduce((a, b) => Math.min(a, b));
  const { rows } = await trx.raw<{
    rows: Array<{ day: string; week: string; month: string; recent: string; last: Date | null }>;
  }>(
    `SELECT coalesce(sum(amount) FILTER (WHERE signed_at >= ?), 0)::text AS day,
            coalesce(sum(amount) FILTER (WHERE signed_at >= ?), 0)::text AS week,
            coalesce(sum(amount) FILTER (WHERE signed_at >= ?), 0)::text AS month,
            count(*) FILTER (WHERE signed_at > ? AND amount > 0)::text AS recent,
            max(signed_at) FILTER (WHERE amount > 0) AS last
       FROM signer_spends WHERE address = ? AND signed_at >= ?`,
    [
      query.dayStart,
      query.weekStart,
      query.monthStart,
      query.velocityStart ?? new Date(8.64e15),
      query.address.toLowerCase(),
      new Date(since),
    ],
  );
  const row = rows[0]!;
  return {
    dailySpentMicro: BigInt(row.day),
    weeklySpentMicro: BigInt(row.week),
    monthlySpentMicro: BigInt(row.month),
    recentCount: Number(row.recent),
    lastPaymentAt: row.last,
  };
}

export interface PgOwnerPolicyStoreOptions {
  connectionString: string;
  poolMax: number;
  /** How far back the last payment is looked for (the longest cooling-off a policy may set). */
  lookBackSeconds: number;
}

export class PgOwnerPolicyStore implements OwnerPolicyStore {
  private readonly knex: Knex;

  constructor(private readonly options: PgOwnerPolicyStoreOptions) {
    this.knex = knexFactory({
      client: 'pg',
      connection: { connectionString: options.connectionString, application_name: 'treasury-signer' },
      pool: { min: 0, max: options.poolMax },
      compileSqlOnError: false,
    });
  }

  async prepare(): Promise<void> {
    await this.knex.migrate.latest({
      migrationSource: SIGNER_MIGRATIONS,
      tableName: 'signer_migrations',
      disableMigrationsListValidation: true,
    });
  }

  async recordAccount(accountKeyHash: string, authority: PolicyAuthority, proof: string | null): Promise<void> {
    await this.knex('signer_accounts')
      .insert({
        account_key_hash: accountKeyHash,
        authority_kind: authority.kind,
        authority_address: authority.kind === 'owner' ? authority.address!.toLowerCase() : null,
        proof,
      })
      .onConflict('account_key_hash')
      .ignore();
  }

  async accountAuthority(accountKeyHash: string): Promise<PolicyAuthority | undefined> {
    const row = await this.knex('signer_accounts')
      .where({ account_key_hash: accountKeyHash })
      .first<{ authority_kind: 'owner' | 'approver'; authority_address: string | null } | undefined>(
        'authority_kind',
        'authority_address',
      );
    return row ? { kind: row.authority_kind, address: row.authority_address } : undefined;
  }

  async recordWallet(address: string, accountKeyHash: string, authority: PolicyAuthority | null): Promise<void> {
    await this.knex('signer_wallets')
      .insert({
        address: address.toLowerCase(),
        account_key_hash: accountKeyHash,
        authority_kind: authority?.kind ?? null,
        authority_address: authority?.address?.toLowerCase() ?? null,
      })
      .onConflict('address')
      .ignore();
  }

  async wallet(address: string): Promise<WalletRecord | undefined> {
    const row = await this.knex('signer_wallets')
      .where({ address: address.toLowerCase() })
      .first<WalletRow | undefined>(...WALLET_COLUMNS);
    return row ? toRecord(row) : undefined;
  }

  async setPolicy(
    address: string,
    decide: (record: WalletRecord) => { authority: PolicyAuthority; policy: StoredPolicy },
  ): Promise<{ authority: PolicyAuthority; policy: StoredPolicy }> {
    const key = address.toLowerCase();
    return this.knex.transaction(async (trx) => {
      await trx('signer_wallets').insert({ address: key }).onConflict('address').ignore();
      const row = await trx('signer_wallets')
        .where({ address: key })
        .forUpdate()
        .first<WalletRow>(...WALLET_COLUMNS);
      const decided = decide(toRecord(row));
      const { authority, policy } = decided;
      const authorityAddress = authority.address!.toLowerCase();
      await trx('signer_wallets')
        .where({ address: key })
        .update({
          authority_kind: authority.kind,
          // An approver's address is read from the signer's configuration each time: only owners are pinned.
          authority_address: authority.kind === 'approver' ? null : authorityAddress,
          policy: JSON.stringify(policy.policy),
          policy_version: policy.version,
          policy_hash: policy.policyHash.toLowerCase(),
          policy_issued_at: policy.issuedAt,
          policy_signature: policy.signature.toLowerCase(),
          updated_at: trx.fn.now(),
        });
      await trx('signer_policy_history').insert({
        address: key,
        version: policy.version,
        policy: JSON.stringify(policy.policy),
        policy_hash: policy.policyHash.toLowerCase(),
        issued_at: policy.issuedAt,
        signature: policy.signature.toLowerCase(),
        authority_kind: authority.kind,
        authority_address: authorityAddress,
      });
      return decided;
    });
  }

  async reserveSpend<R>(
    spend: Spend,
    query: (policy: WalletPolicy) => SpendQuery,
    decide: (current: StoredPolicy | null, state: SpendState | null) => SpendVerdict<R>,
  ): Promise<{ kind: 'recorded'; id: string } | { kind: 'refused'; refusal: R } | { kind: 'unrecorded' }> {
    const key = spend.address.toLowerCase();
    return this.knex.transaction(async (trx) => {
      const row = await trx('signer_wallets')
        .where({ address: key })
        .forUpdate()
        .first<WalletRow | undefined>(...WALLET_COLUMNS);
      if (!row) return { kind: 'unrecorded' as const };
      const { current } = toRecord(row);
      const state = current
        ? await readSpendState(
            trx,
            query(current.policy),
            new Date(spend.at.getTime() - this.options.lookBackSeconds * 1000),
          )
        : null;
      const verdict = decide(current, state);
      if (!verdict.record) return { kind: 'refused' as const, refusal: verdict.refusal };
      const [inserted] = await trx('signer_spends')
        .insert({
          address: key,
          amount: spend.amount.toString(),
          payee: spend.payee.toLowerCase(),
          signed_at: spend.at,
        })
        .returning<Array<{ id: string }>>('id');
      return { kind: 'recorded' as const, id: String(inserted!.id) };
    });
  }

  async giveBack(id: string): Promise<void> {
    await this.knex('signer_spends').where({ id }).delete();
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }
}
