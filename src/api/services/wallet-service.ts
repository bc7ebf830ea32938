/**
 * Sub-wallets: create (a secp256k1 DEK generated in the HSM, stored only wrapped by its account key, within
 * the account's wallet bounds: ./wallet-bounds.ts), list, read, rotate (same id, new key and address, history kept, old DEK destroyed) and revoke (every
 * later operation answers 410; the DEK is destroyed in the signer too). Every change is serialised by
 * the per-wallet advisory lock and written to the audit ledger in the same transaction.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { appendAuditEvent } from '../audit/audit-ledger.js';
import { generateId } from '../auth/token-codec.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from '../platform/account-service.js';
import type { SignerGateway } from './signer-gateway.js';
import { checkRetirementBalance, type RetirementBalance } from './check-retirement-balance.js';
import { lockWallet } from './wallet-lock.js';
import { keysetPage, readKeysetPage, type PageRequest } from '../db/keyset-cursor.js';
import { describeError } from '../log/describe-error.js';
import type { WalletPage, WalletView } from '../../shared/api-responses/wallet-responses.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import type { WalletBoundsConfig } from '../config/app-config.js';
import { lockWalletCounts, refuseOverWalletBounds, walletOwnerOf } from './wallet-bounds.js';

/** The id shape of wallets, which the wallet list's page cursors name. */
const WALLET_ID = /^wal_[0-9a-f]{24}$/;

export interface WalletRow {
  id: string;
  account_id: string;
  label: string | null;
  network: string;
  address: string;
  public_key: string;
  wallet_key_ref: string | null;
  key_version: number;
  policy: Record<string, unknown>;
  status: 'active' | 'revoked';
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
}

export interface CreateWalletInput {
  label?: string | undefined;
  chain?: string | undefined;
  policy?: Record<string, unknown> | undefined;
}

export class WalletService {
  constructor(
    private readonly knex: Knex,
    private readonly signer: SignerGateway,
    private readonly accounts: AccountService,
    private readonly chains: ChainRegistry,
    private readonly metrics: TreasuryMetrics,
    private readonly log: Logger,
    private readonly defaultChain: string,
    /** Reads the balance a rotation or revocation would strand (./check-retirement-balance.ts). */
    private readonly balances: Pick<BalanceReader, 'usdcBalance'>,
    /** Wallet counts per agent and per account (./wallet-bounds.ts). */
    private readonly bounds: WalletBoundsConfig,
  ) {}

  toView(row: WalletRow): WalletView {
    return {
      id: row.id,
      account_id: row.account_id,
      label: row.label,
      chain: this.chains.resolve(row.network)?.name ?? row.network,
      network: row.network,
      address: row.address,
      policy: row.policy,
      status: row.status,
      key_version: row.key_version,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      revoked_at: row.revoked_at?.toISOString() ?? null,
    };
  }

  /**
   * A new wallet of the account: its key generated in the signer once the account's wallet count, locked
   * until the row commits, leaves room for it (./wallet-bounds.ts; 409 `wallet_limit_reached` otherwise).
   * `defaultPolicy` applies when the input names no policy (an agent bearer's wallet).
   */
  async create(
    accountId: string,
    input: CreateWalletInput,
    actor: string,
    options: { defaultPolicy?: WalletPolicy | undefined } = {},
  ): Promise<WalletView> {
    const chain = this.chains.resolve(input.chain ?? this.defaultChain);
    if (!chain) {
      throw new AppError('chain_not_supported', {
        fields: { chain: input.chain, supported: this.chains.chains.map((c) => c.name) },
      });
    }
    const account = await this.accounts.get(accountId);
    const policy = input.policy ?? options.defaultPolicy ?? {};
    const row = await this.knex.transaction(async (trx) => {
      const counts = await lockWalletCounts(trx, await walletOwnerOf(trx, accountId), this.bounds);
      try {
        refuseOverWalletBounds(counts, this.bounds);
      } catch (err) {
        this.metrics.walletOperations.inc({ operation: 'create', outcome: 'wallet_limit_reached' });
        throw err;
      }
      const key = await this.signer.call('create_wallet_key', { account_key_ref: account.account_key_ref });
      return this.insertWallet(
        trx,
        { accountId, label: input.label ?? null, network: chain.network, policy, key },
        actor,
      );
    });
    this.metrics.walletOperations.inc({ operation: 'create', outcome: 'ok' });
    return this.toView(row);
  }

  /** Writes a new wallet, its first key version and its `wallet.created` audit row. */
  private async insertWallet(
    trx: Knex.Transaction,
    w: {
      accountId: string;
      label: string | null;
      network: string;
      policy: Record<string, unknown>;
      key: { address: string; public_key: string; wallet_key_ref: string };
    },
    actor: string,
  ): Promise<WalletRow> {
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

  /** A page of the account's wallets, oldest first; `next_cursor` (null on the last page) asks for the next. */
  async list(
    accountId: string,
    options: PageRequest & { status?: 'active' | 'revoked' | undefined },
  ): Promise<WalletPage> {
    const query = this.knex('wallets').where({ account_id: accountId });
    if (options.status) query.andWhere({ status: options.status });
    const { page, nextCursor } = await readKeysetPage<WalletRow>(query, options, WALLET_ID);
    return { wallets: page.map((r) => this.toView(r)), next_cursor: nextCursor };
  }

  /** The ids of the account's active wallets on `network` (CAIP-2), oldest first, at most `limit`. */
  async activeOn(accountId: string, network: string, limit = 10): Promise<string[]> {
    const rows = (await this.knex('wallets')
      .where({ account_id: accountId, network, status: 'active' })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(limit)
      .select('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /**
   * The first page of active wallets of each account, in one query whatever the number of accounts: for every
   * account the same page (and the same `next_cursor` for `GET /v1/wallets?status=active`) as `list` with
   * `{limit, status: 'active'}`. Each account's part is read on the (account_id, created_at) index and stops
   * after `limit + 1` rows.
   */
  async firstActivePages(accountIds: readonly string[], limit: number): Promise<Map<string, WalletPage>> {
    const pages = new Map<string, WalletPage>();
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
    for (const accountId of accountIds) {
      const { page, nextCursor } = keysetPage(byAccount.get(accountId) ?? [], limit);
      pages.set(accountId, { wallets: page.map((r) => this.toView(r)), next_cursor: nextCursor });
    }
    return pages;
  }

  /** Loads a wallet the account owns; 404 when absent or another account's, 410 when revoked. */
  async getActive(accountId: string, walletId: string, trx: Knex | Knex.Transaction = this.knex): Promise<WalletRow> {
    const row = (await trx<WalletRow>('wallets').where({ id: walletId }).first()) as WalletRow | undefined;
    if (!row || row.account_id !== accountId) throw new AppError('wallet_not_found');
    if (row.status === 'revoked')
      throw new AppError('wallet_revoked', {
        fields: { wallet_id: walletId, revoked_at: row.revoked_at?.toISOString() ?? null },
      });
    return row;
  }

  /** Replaces the wallet's policy (already validated and normalised by the schema). */
  async setPolicy(
    accountId: string,
    walletId: string,
    policy: Record<string, unknown>,
    actor: string,
  ): Promise<WalletView> {
    const row = await this.knex.transaction(async (trx) => {
      await lockWallet(trx, walletId);
      const current = await this.getActive(accountId, walletId, trx);
      const now = new Date();
      const [updated] = (await trx('wallets')
        .where({ id: walletId })
        .update({ policy: JSON.stringify(policy), updated_at: now })
        .returning('*')) as WalletRow[];
      await appendAuditEvent(trx, {
        chainKey: walletId,
        eventType: 'policy.updated',
        actor,
        payload: { previous: current.policy, policy },
        at: now,
      });
      return updated!;
    });
    this.metrics.walletOperations.inc({ operation: 'set_policy', outcome: 'ok' });
    return this.toView(row);
  }

  /**
   * A new key and address for the wallet (same id); the old key is destroyed. Refused while the old address
   * holds USDC or its balance cannot be read, unless `abandonBalance` (./check-retirement-balance.ts); the
   * balance is read under the wallet's lock, so no payment or other rotation changes the wallet meanwhile.
   */
  async rotate(accountId: string, walletId: string, actor: string, abandonBalance = false): Promise<WalletView> {
    const account = await this.accounts.get(accountId);
    const { row, oldKeyRef } = await this.knex.transaction(async (trx) => {
      await lockWallet(trx, walletId);
      const current = await this.getActive(accountId, walletId, trx);
      const balance = await this.retirementBalance(current, abandonBalance, 'rotate');
      const key = await this.signer.call('create_wallet_key', { account_key_ref: account.account_key_ref });
      const now = new Date();
      const version = current.key_version + 1;
      await trx('wallet_keys').where({ wallet_id: walletId, version: current.key_version }).update({ retired_at: now });
      await trx('wallet_keys').insert({
        wallet_id: walletId,
        version,
        address: key.address,
        public_key: key.public_key,
        wallet_key_ref: key.wallet_key_ref,
        created_at: now,
      });
      const [updated] = (await trx('wallets')
        .where({ id: walletId })
        .update({
          address: key.address,
          public_key: key.public_key,
          wallet_key_ref: key.wallet_key_ref,
          key_version: version,
          updated_at: now,
        })
        .returning('*')) as WalletRow[];
      await appendAuditEvent(trx, {
        chainKey: walletId,
        eventType: 'wallet.rotated',
        actor,
        payload: { old_address: current.address, new_address: key.address, key_version: version, ...balance },
        at: now,
      });
      return { row: updated!, oldKeyRef: current.wallet_key_ref };
    });
    await this.destroyKey(account.account_key_ref, walletId, row.key_version - 1, oldKeyRef);
    this.metrics.walletOperations.inc({ operation: 'rotate', outcome: 'ok' });
    return this.toView(row);
  }

  /** Revokes the wallet and destroys its key; refused like `rotate` while its address may hold USDC. */
  async revoke(accountId: string, walletId: string, actor: string, abandonBalance = false): Promise<WalletView> {
    const account = await this.accounts.get(accountId);
    const row = await this.knex.transaction(async (trx) => {
      await lockWallet(trx, walletId);
      const current = await this.getActive(accountId, walletId, trx);
      const balance = await this.retirementBalance(current, abandonBalance, 'revoke');
      const now = new Date();
      const [updated] = (await trx('wallets')
        .where({ id: walletId })
        .update({ status: 'revoked', revoked_at: now, updated_at: now })
        .returning('*')) as WalletRow[];
      await trx('wallet_keys').where({ wallet_id: walletId, version: current.key_version }).update({ retired_at: now });
      await appendAuditEvent(trx, {
        chainKey: walletId,
        eventType: 'wallet.revoked',
        actor,
        payload: { address: current.address, key_version: current.key_version, ...balance },
        at: now,
      });
      return updated!;
    });
    await this.destroyKey(account.account_key_ref, walletId, row.key_version, row.wallet_key_ref);
    this.metrics.walletOperations.inc({ operation: 'revoke', outcome: 'ok' });
    return this.toView(row);
  }

  private async retirementBalance(
    wallet: WalletRow,
    abandonBalance: boolean,
    operation: 'rotate' | 'revoke',
  ): Promise<RetirementBalance> {
    try {
      return await checkRetirementBalance(this.balances, this.chains, wallet, abandonBalance);
    } catch (err) {
      this.metrics.walletOperations.inc({ operation, outcome: err instanceof AppError ? err.code : 'failed' });
      throw err;
    }
  }

  /**
   * Retries the destruction of every retired key whose destruction failed earlier (signer down during a
   * rotate or revoke). Returns how many were destroyed now. Safe to run at any time.
   */
  async destroyRetiredKeys(): Promise<number> {
    const pending = (await this.knex('wallet_keys as k')
      .join('wallets as w', 'w.id', 'k.wallet_id')
      .join('treasury_accounts as a', 'a.id', 'w.account_id')
      .whereNotNull('k.retired_at')
      .whereNull('k.destroyed_at')
      .whereNotNull('k.wallet_key_ref')
      .select('k.wallet_id', 'k.version', 'k.wallet_key_ref', 'a.account_key_ref')) as Array<{
      wallet_id: string;
      version: number;
      wallet_key_ref: string;
      account_key_ref: string;
    }>;
    let destroyed = 0;
    for (const key of pending) {
      if (await this.destroyKey(key.account_key_ref, key.wallet_id, key.version, key.wallet_key_ref)) destroyed++;
    }
    return destroyed;
  }

  /**
   * Destroys a retired DEK in the signer after the change that retired it committed. If the signer is
   * unreachable the key stays retired (never used again by the front) and is destroyed on the next try.
   */
  private async destroyKey(
    accountKeyRef: string,
    walletId: string,
    version: number,
    keyRef: string | null,
  ): Promise<boolean> {
    if (!keyRef) return false;
    try {
      await this.signer.call('destroy_wallet_key', { account_key_ref: accountKeyRef, wallet_key_ref: keyRef });
      const now = new Date();
      await this.knex('wallet_keys')
        .where({ wallet_id: walletId, version })
        .update({ wallet_key_ref: null, destroyed_at: now });
      await this.knex('wallets').where({ id: walletId, status: 'revoked' }).update({ wallet_key_ref: null });
      return true;
    } catch (err) {
      this.metrics.walletOperations.inc({ operation: 'destroy_key', outcome: 'error' });
      this.log.error(
        { wallet_id: walletId, key_version: version, err: describeError(err) },
        'retired wallet key not destroyed yet',
      );
      return false;
    }
  }
}
