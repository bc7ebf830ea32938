/**
 * The wallet store on PostgreSQL (./wallet-store.ts): every query of the wallet wing's wallets and keys. Each
 * change takes the wallet's advisory lock (./wallet-lock.ts) and appends its audit row in the same transaction;
 * a creation takes its owner's wallet count lock (./pg-wallet-counts.ts) until the wallet's row commits.
 *
 * Defends: a change or an audit row written without the other; two changes of one wallet interleaving. Does
 * not defend: the rules the changes follow (../wallet-service.ts decides them on the row it is handed).
 */
import type { Knex } from 'knex';
import { appendAuditEvent } from '../../audit/audit-ledger.js';
import { generateId } from '../../auth/token-codec.js';
import type { WalletBoundsConfig } from '../../config/app-config.js';
import { keysetPage, readKeysetPage, type PageRequest } from '../../db/keyset-cursor.js';
import type { WalletCounts } from '../wallet-bounds.js';
import { lockWalletCounts, walletOwnerOf } from './pg-wallet-counts.js';
import { lockWallet } from './wallet-lock.js';
import type {
  NewWallet,
  RetiredKey,
  WalletAuditNote,
  WalletChange,
  WalletRow,
  WalletRowPage,
  WalletStore,
} from './wallet-store.js';

/** The id shape of wallets, which the wallet list's page cursors name. */
const WALLET_ID = /^wal_[0-9a-f]{24}$/;

export class PgWalletStore implements WalletStore {
  constructor(private readonly knex: Knex) {}

  async createCounted(
    accountId: string,
    bounds: WalletBoundsConfig,
    actor: string,
    make: (counts: WalletCounts) => Promise<NewWallet>,
  ): Promise<WalletRow> {
    return this.knex.transaction(async (trx) => {
      const counts = await lockWalletCounts(trx, await walletOwnerOf(trx, accountId), bounds);
      return insertWallet(trx, await make(counts), actor);
    });
  }

  async find(walletId: string): Promise<WalletRow | undefined> {
    return (await this.knex<WalletRow>('wallets').where({ id: walletId }).first()) as WalletRow | undefined;
  }

  async page(
    accountId: string,
    request: PageRequest & { status?: 'active' | 'revoked' | undefined },
  ): Promise<WalletRowPage> {
    const query = this.knex('wallets').where({ account_id: accountId });
    if (request.status) query.andWhere({ status: request.status });
    return readKeysetPage<WalletRow>(query, request, WALLET_ID);
  }

  async activeOn(accountId: string, network: string, limit: number): Promise<string[]> {
    const rows = (await this.knex('wallets')
      .where({ account_id: accountId, network, status: 'active' })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(limit)
      .select('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** Each account's part is read on the (account_id, created_at) index and stops after `limit + 1` rows. */
  async firstActivePages(accountIds: readonly string[], limit: number): Promise<Map<string, WalletRowPage>> {
    const pages = new Map<string, WalletRowPage>();
    if (accountIds.length === 0) return pages;
    const { rows } = (await this.knex.raw(
      `SELECT w.* FROM unnest(?::text[]) AS a(account_id)
         CROSS JOIN LATERAL (SELECT * FROM wallets WHERE wallets.account_id = a.account_id AND status = 'active' ORDER BY created_at, id LIMIT ?) w
        ORDER BY w.account_id, w.created_at, w.id`,
      [[...new Set(accountIds)], limit + 1],
    )) as { rows: WalletRow[] };
    const byAccount = new Map<string, WalletRow[]>();
    for (const row of rows)
      (byAccount.get(row.account_id) ?? byAccount.set(row.account_id, []).get(row.account_id)!).push(row);
    for (const accountId of accountIds) pages.set(accountId, keysetPage(byAccount.get(accountId) ?? [], limit));
    return pages;
  }

  async change(
    walletId: string,
    decide: (current: WalletRow | undefined) => Promise<{ change: WalletChange; audit: WalletAuditNote }>,
  ): Promise<WalletRow> {
    return this.knex.transaction(async (trx) => {
      await lockWallet(trx, walletId);
      const current = (await trx<WalletRow>('wallets').where({ id: walletId }).first()) as WalletRow | undefined;
      const { change, audit } = await decide(current);
      const now = new Date();
      const updated = await applyChange(trx, current!, change, now);
      await appendAuditEvent(trx, { chainKey: walletId, ...audit, at: now });
      return updated;
    });
  }

  async retiredKeys(): Promise<RetiredKey[]> {
    return (await this.knex('wallet_keys as k')
      .join('wallets as w', 'w.id', 'k.wallet_id')
      .join('treasury_accounts as a', 'a.id', 'w.account_id')
      .whereNotNull('k.retired_at')
      .whereNull('k.destroyed_at')
      .whereNotNull('k.wallet_key_ref')
      .select(
        'k.wallet_id',
        'a.id as account_id',
        'k.version',
        'k.wallet_key_ref',
        'a.account_key_ref',
        'k.address',
      )) as RetiredKey[];
  }

  async markKeyDestroyed(walletId: string, version: number): Promise<void> {
    const now = new Date();
    await this.knex('wallet_keys')
      .where({ wallet_id: walletId, version })
      .update({ wallet_key_ref: null, destroyed_at: now });
    await this.knex('wallets').where({ id: walletId, status: 'revoked' }).update({ wallet_key_ref: null });
  }
}

/** Writes a new wallet, its first key version and its `wallet.created` audit row. */
async function insertWallet(trx: Knex.Transaction, w: NewWallet, actor: string): Promise<WalletRow> {
  const id = generateId('wal_');
  const now = new Date();
  const { key } = w;
  const [inserted] = (await trx('wallets')
    .insert({
      id,
      account_id: w.accountId,
      label: w.label,
      network: w.network,
      address: key.address,
      public_key: key.public_key,
      wallet_key_ref: key.wallet_key_ref,
      key_version: 1,
      policy: JSON.stringify(w.policy),
      status: 'active',
      created_at: now,
      updated_at: now,
    })
    .returning('*')) as WalletRow[];
  await trx('wallet_keys').insert({
    wallet_id: id,
    version: 1,
    address: key.address,
    public_key: key.public_key,
    wallet_key_ref: key.wallet_key_ref,
    created_at: now,
  });
  await appendAuditEvent(trx, {
    chainKey: id,
    eventType: 'wallet.created',
    actor,
    payload: {
      account_id: w.accountId,
      address: key.address,
      network: w.network,
      label: w.label,
      policy: w.policy,
      key_version: 1,
    },
    at: now,
  });
  return inserted!;
}

/** Writes `change` of the wallet `current` (read under its lock); the wallet as it stands after. */
async function applyChange(
  trx: Knex.Transaction,
  current: WalletRow,
  change: WalletChange,
  now: Date,
): Promise<WalletRow> {
  const wallet = trx('wallets').where({ id: current.id });
  const retireCurrentKey = () =>
    trx('wallet_keys').where({ wallet_id: current.id, version: current.key_version }).update({ retired_at: now });
  if (change.kind === 'set_policy' || change.kind === 'set_signed_policy') {
    const d = change.kind === 'set_signed_policy' ? change.document : undefined;
    const [updated] = (await wallet
      .update({
        policy: JSON.stringify(change.policy),
        policy_version: d?.version ?? null,
        policy_issued_at: d?.issuedAt ?? null,
        policy_signature: d?.signature ?? null,
        policy_signature_form: d?.form ?? null,
        policy_authority_kind: d?.authority.kind ?? null,
        policy_authority_address: d?.authority.address ?? null,
        updated_at: now,
      })
      .returning('*')) as WalletRow[];
    return updated!;
  }
  if (change.kind === 'revoke') {
    const [updated] = (await wallet
      .update({ status: 'revoked', revoked_at: now, updated_at: now })
      .returning('*')) as WalletRow[];
    await retireCurrentKey();
    return updated!;
  }
  const key = {
    address: change.key.address,
    public_key: change.key.public_key,
    wallet_key_ref: change.key.wallet_key_ref,
  };
  const version = current.key_version + 1;
  await retireCurrentKey();
  await trx('wallet_keys').insert({ wallet_id: current.id, version, ...key, created_at: now });
  // A signed policy document names the wallet's address: the new address has none until its owner signs one.
  const [updated] = (await wallet
    .update({ ...key, key_version: version, updated_at: now, ...NO_SIGNED_DOCUMENT })
    .returning('*')) as WalletRow[];
  return updated!;
}

const NO_SIGNED_DOCUMENT = {
  policy_version: null,
  policy_issued_at: null,
  policy_signature: null,
  policy_signature_form: null,
  policy_authority_kind: null,
  policy_authority_address: null,
} as const;
