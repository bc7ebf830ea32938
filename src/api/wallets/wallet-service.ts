/**
 * Sub-wallets: create (a secp256k1 DEK generated in the HSM, stored only wrapped by its account key — or, on a
 * Solana chain, an Ed25519 key kept in the HSM or KMS (docs/adr/0013-solana-keys.md) — within
 * the account's wallet bounds: ./wallet-bounds.ts), list, read, rotate (same id, new key and address, history
 * kept, old DEK destroyed) and revoke (every later operation answers 410; the DEK is destroyed in the signer
 * too). Every change is decided on the wallet read under its advisory lock and written with its audit row in
 * the same transaction (./store/wallet-store.ts; PostgreSQL: ./store/pg-wallet-store.ts).
 *
 * Defends: another account's wallet seen or changed (404, as a missing one); a revoked wallet used (410); a
 * key retired while its address may hold USDC (./check-retirement-balance.ts); a key retired that its owner's
 * signed policy does not let the signer destroy (409 `key_destruction_not_allowed`, asked before anything is
 * written: ./key-destruction-consent.ts). Does not defend: who the bearer is (./wallet-bearer.ts) nor what a
 * wallet may spend (the pay wing, src/api/pay/). The signer, not this service, keeps a key its owner did not
 * let go: a destruction it refuses leaves the key retired, retried by `destroyRetiredKeys`.
 */
import type { Logger } from 'pino';
import type { BalanceReader } from '../chain/balance-reader.js';
import { networkFamily, type ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from '../platform/account-service.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import { checkRetirementBalance, type RetirementBalance } from './check-retirement-balance.js';
import { refuseKeyDestructionNotAllowed } from './key-destruction-consent.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import { describeError } from '../log/describe-error.js';
import type { WalletPage, WalletView } from '../../shared/api-responses/wallet-responses.js';
import type { WalletPolicy } from '../../../policy/policy-schema.js';
import type { WalletBoundsConfig } from '../config/app-config.js';
import { refuseOverWalletBounds } from './wallet-bounds.js';
import { readOwnerPolicy } from './read-owner-policy.js';
import { walletPolicyReceipt, type PolicyReceipt } from './policy-receipt.js';
import { samePolicy, storedPolicyHash } from './policy-audit.js';
import type { WalletKey, WalletRow, WalletRowPage, WalletStore } from './store/wallet-store.js';

export type { WalletRow } from './store/wallet-store.js';

export interface CreateWalletInput {
  label?: string | undefined;
  chain?: string | undefined;
  policy?: Record<string, unknown> | undefined;
}

/** What the wallet service is built with (src/api/app.ts). */
export interface WalletServiceDeps {
  store: WalletStore;
  /** Generates and destroys wallet keys. */
  signer: Pick<SignerGateway, 'call'>;
  /** The platform's accounts: each wallet's key is wrapped by its account's key. */
  accounts: Pick<AccountService, 'get'>;
  chains: ChainRegistry;
  metrics: TreasuryMetrics;
  log: Logger;
  /** The chain of a wallet created without one. */
  defaultChain: string;
  /** Reads the balance a rotation or revocation would strand (./check-retirement-balance.ts). */
  balances: Pick<BalanceReader, 'usdcBalance'>;
  /** Wallet counts per agent and per account (./wallet-bounds.ts). */
  bounds: WalletBoundsConfig;
}

/** A Treasury account as its keys are made and destroyed: its id names its share of the signer calls. */
type KeyedAccount = { id: string; account_key_ref: string };

export class WalletService {
  private readonly store: WalletStore;
  private readonly signer: Pick<SignerGateway, 'call'>;
  private readonly chains: ChainRegistry;
  private readonly metrics: TreasuryMetrics;
  /**
   * Told of each wallet once its row committed, and of each change of it that committed through this process
   * (the pay wing reads a new wallet's snapshot ahead, and forgets a changed one's: ../pay/prefetch-snapshot.ts).
   */
  private readonly listeners = {
    created: [] as Array<(walletId: string) => void>,
    changed: [] as Array<(walletId: string) => void>,
  };

  constructor(private readonly deps: WalletServiceDeps) {
    ({ store: this.store, signer: this.signer, chains: this.chains, metrics: this.metrics } = deps);
  }

  /** `WalletStore.change`, then the listeners told (only once it committed). */
  private async changeWallet(walletId: string, decide: Parameters<WalletStore['change']>[1]): Promise<WalletRow> {
    const row = await this.store.change(walletId, decide);
    this.changed(walletId);
    return row;
  }

  toView(row: WalletRow): WalletView {
    return {
      id: row.id,
      account_id: row.account_id,
      label: row.label,
      chain: this.chains.resolveAny(row.network)?.name ?? row.network,
      network: row.network,
      address: row.address,
      policy: row.policy,
      policy_state: row.policy_version == null ? 'ceilings_only' : 'owner_signed',
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
    const chain = this.chains.resolveAny(input.chain ?? this.deps.defaultChain);
    if (!chain) {
      throw new AppError('chain_not_supported', {
        fields: { chain: input.chain, supported: this.chains.all.map((c) => c.name) },
      });
    }
    const account = await this.deps.accounts.get(accountId);
    const policy = input.policy ?? options.defaultPolicy ?? {};
    const row = await this.store.createCounted(accountId, this.deps.bounds, actor, async (counts) => {
      try {
        refuseOverWalletBounds(counts, this.deps.bounds);
      } catch (err) {
        this.metrics.walletOperations.inc({ operation: 'create', outcome: 'wallet_limit_reached' });
        throw err;
      }
      const key = await this.newKey(account, chain.network);
      return { accountId, label: input.label ?? null, network: chain.network, policy, key };
    });
    this.metrics.walletOperations.inc({ operation: 'create', outcome: 'ok' });
    for (const listener of this.listeners.created) listener(row.id);
    return this.toView(row);
  }

  /** Calls `listener` with each wallet's id once its row committed (synchronously: it must not throw or wait). */
  onCreated(listener: (walletId: string) => void): void {
    this.listeners.created.push(listener);
  }

  /** Calls `listener` with a wallet's id each time a change of it committed through this process (as onCreated). */
  onChanged(listener: (walletId: string) => void): void {
    this.listeners.changed.push(listener);
  }

  /** Tells the listeners that a change of the wallet committed (every `WalletStore.change` of this process). */
  changed(walletId: string): void {
    for (const listener of this.listeners.changed) listener(walletId);
  }

  /** A page of the account's wallets, oldest first; `next_cursor` (null on the last page) asks for the next. */
  async list(
    accountId: string,
    options: PageRequest & { status?: 'active' | 'revoked' | undefined },
  ): Promise<WalletPage> {
    return this.pageView(await this.store.page(accountId, options));
  }

  /** The ids of the account's active wallets on `network` (CAIP-2), oldest first, at most `limit`. */
  async activeOn(accountId: string, network: string, limit = 10): Promise<string[]> {
    return this.store.activeOn(accountId, network, limit);
  }

  /**
   * The first page of active wallets of each account, in one query whatever the number of accounts: for every
   * account the same page (and the same `next_cursor` for `GET /v1/wallets?status=active`) as `list` with
   * `{limit, status: 'active'}`.
   */
  async firstActivePages(accountIds: readonly string[], limit: number): Promise<Map<string, WalletPage>> {
    const pages = new Map<string, WalletPage>();
    for (const [accountId, page] of await this.store.firstActivePages(accountIds, limit))
      pages.set(accountId, this.pageView(page));
    return pages;
  }

  /** Loads a wallet the account owns; 404 when absent or another account's, 410 when revoked. */
  async getActive(accountId: string, walletId: string): Promise<WalletRow> {
    return activeOf(accountId, walletId, await this.store.find(walletId));
  }

  /** The signer's receipt of what it holds for `wallet` (read by `getActive`), signed by its key (./policy-receipt.ts). */
  policyReceipt(wallet: WalletRow, nonce: string): Promise<PolicyReceipt> {
    return walletPolicyReceipt(this.deps, wallet, nonce);
  }

  /**
   * Replaces the wallet's policy (already validated and normalised by the schema), unsigned: refused with 409
   * `policy_signature_required` while the signer holds an owner-signed policy for the wallet (asked first;
   * 503 when it cannot say), or the API stored one under the wallet's lock (a signed change that landed
   * meanwhile). The same policy as the stored one writes nothing (no audit row, `updated_at` unchanged); a
   * change writes its `policy.updated` row: the new policy and the previous one's hash (./policy-audit.ts).
   * Signed changes: ./owner-policy-service.ts.
   */
  async setPolicy(
    accountId: string,
    walletId: string,
    policy: Record<string, unknown>,
    actor: string,
  ): Promise<WalletView> {
    const wallet = await this.getActive(accountId, walletId);
    const held = await readOwnerPolicy(this.signer, wallet.address, wallet.account_id);
    if (held.version !== null) throw signatureRequired(held.version);
    if (wallet.policy_version == null && samePolicy(wallet.policy, policy)) {
      this.metrics.walletOperations.inc({ operation: 'set_policy', outcome: 'unchanged' });
      return this.toView(wallet);
    }
    const row = await this.changeWallet(walletId, async (found) => {
      const current = activeOf(accountId, walletId, found);
      if (current.policy_version != null) throw signatureRequired(Number(current.policy_version));
      const payload = { previous_policy_hash: storedPolicyHash(current.policy), policy };
      return { change: { kind: 'set_policy', policy }, audit: { eventType: 'policy.updated', actor, payload } };
    });
    this.metrics.walletOperations.inc({ operation: 'set_policy', outcome: 'ok' });
    return this.toView(row);
  }

  /**
   * A new key and address for the wallet (same id); the old key is destroyed. Refused while the wallet's
   * owner-signed policy does not allow that (./key-destruction-consent.ts), or the old address holds USDC or
   * its balance cannot be read, unless `abandonBalance` (./check-retirement-balance.ts); both are read under
   * the wallet's lock, so no payment or other rotation changes the wallet meanwhile.
   */
  async rotate(accountId: string, walletId: string, actor: string, abandonBalance = false): Promise<WalletView> {
    const account = await this.deps.accounts.get(accountId);
    let old: { keyRef: string | null; address: string } | undefined;
    const row = await this.changeWallet(walletId, async (found) => {
      const current = activeOf(accountId, walletId, found);
      const balance = await this.mayRetireKey(current, abandonBalance, 'rotate');
      const key = await this.newKey(account, current.network);
      old = { keyRef: current.wallet_key_ref, address: current.address };
      const payload = {
        old_address: current.address,
        new_address: key.address,
        key_version: current.key_version + 1,
        ...balance,
      };
      return { change: { kind: 'rotate', key }, audit: { eventType: 'wallet.rotated', actor, payload } };
    });
    await this.destroyKey(account, walletId, row.key_version - 1, old!.keyRef, old!.address);
    this.metrics.walletOperations.inc({ operation: 'rotate', outcome: 'ok' });
    return this.toView(row);
  }

  /**
   * Revokes the wallet and destroys its key; refused like `rotate` while its owner-signed policy does not allow
   * that, or its address may hold USDC.
   */
  async revoke(accountId: string, walletId: string, actor: string, abandonBalance = false): Promise<WalletView> {
    const account = await this.deps.accounts.get(accountId);
    const row = await this.changeWallet(walletId, async (found) => {
      const current = activeOf(accountId, walletId, found);
      const balance = await this.mayRetireKey(current, abandonBalance, 'revoke');
      const payload = { address: current.address, key_version: current.key_version, ...balance };
      return { change: { kind: 'revoke' }, audit: { eventType: 'wallet.revoked', actor, payload } };
    });
    await this.destroyKey(account, walletId, row.key_version, row.wallet_key_ref, row.address);
    this.metrics.walletOperations.inc({ operation: 'revoke', outcome: 'ok' });
    return this.toView(row);
  }

  private pageView({ page, nextCursor }: WalletRowPage): WalletPage {
    return { wallets: page.map((r) => this.toView(r)), next_cursor: nextCursor };
  }

  /**
   * A new key of the account for a wallet on `network`, generated in the signer (only its reference and its
   * public parts leave it): Ed25519 on a Solana network, secp256k1 otherwise.
   */
  private async newKey(account: KeyedAccount, network: string): Promise<WalletKey> {
    const curve = networkFamily(network) === 'svm' ? { curve: 'ed25519' as const } : {};
    const key = await this.signer.call(
      'create_wallet_key',
      { account_key_ref: account.account_key_ref, ...curve },
      account.id,
    );
    return { address: key.address, public_key: key.public_key, wallet_key_ref: key.wallet_key_ref };
  }

  /**
   * Under the wallet's lock, before its key is retired: the owner's signed policy lets the signer destroy it
   * (./key-destruction-consent.ts), then the balance the destruction would strand (./check-retirement-balance.ts).
   * A refusal is counted by its code.
   */
  private async mayRetireKey(
    wallet: WalletRow,
    abandonBalance: boolean,
    operation: 'rotate' | 'revoke',
  ): Promise<RetirementBalance> {
    try {
      await refuseKeyDestructionNotAllowed(this.signer, wallet);
      return await checkRetirementBalance(this.deps.balances, this.chains, wallet, abandonBalance);
    } catch (err) {
      this.metrics.walletOperations.inc({ operation, outcome: err instanceof AppError ? err.code : 'failed' });
      throw err;
    }
  }

  /**
   * Retries the destruction of every retired key whose destruction failed earlier (signer down during a
   * rotate or revoke, or its owner's signed policy not allowing it yet). Returns how many were destroyed now.
   * Safe to run at any time.
   */
  async destroyRetiredKeys(): Promise<number> {
    let destroyed = 0;
    for (const key of await this.store.retiredKeys()) {
      const { account_id, account_key_ref, wallet_id, version, wallet_key_ref, address } = key;
      const account = { id: account_id, account_key_ref };
      if (await this.destroyKey(account, wallet_id, version, wallet_key_ref, address)) destroyed++;
    }
    return destroyed;
  }

  /**
   * Destroys a retired DEK in the signer after the change that retired it committed, naming the address it is
   * the key of (the signer proves it, and asks that address's owner-signed policy). If the signer is
   * unreachable, or refuses because the owner's signed policy does not allow it (an owner's change that landed
   * after the check under the lock), the key stays retired (never used again by the front) and is destroyed on
   * a later try.
   */
  private async destroyKey(
    account: KeyedAccount,
    walletId: string,
    version: number,
    keyRef: string | null,
    address: string,
  ): Promise<boolean> {
    if (!keyRef) return false;
    try {
      await this.signer.call(
        'destroy_wallet_key',
        { account_key_ref: account.account_key_ref, wallet_key_ref: keyRef, address },
        account.id,
      );
      await this.store.markKeyDestroyed(walletId, version);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.code === 'key_destruction_not_allowed') {
        this.metrics.walletOperations.inc({ operation: 'destroy_key', outcome: err.code });
        this.deps.log.warn(
          { wallet_id: walletId, key_version: version, code: err.code, current_version: err.fields.current_version },
          "retired wallet key kept: its owner-signed policy does not allow the key's destruction",
        );
        return false;
      }
      this.metrics.walletOperations.inc({ operation: 'destroy_key', outcome: 'error' });
      this.deps.log.error(
        { wallet_id: walletId, key_version: version, err: describeError(err) },
        'retired wallet key not destroyed yet',
      );
      return false;
    }
  }
}

/** 409 `policy_signature_required`: the wallet's policy is owner-signed at `version`; the next must be signed. */
function signatureRequired(version: number): AppError {
  return new AppError('policy_signature_required', {
    fields: { current_version: version, next_version: version + 1 },
  });
}

/** `row` if the account owns it and it is active: 404 when absent or another account's, 410 when revoked. */
export function activeOf(accountId: string, walletId: string, row: WalletRow | undefined): WalletRow {
  if (!row || row.account_id !== accountId) throw new AppError('wallet_not_found');
  if (row.status === 'revoked')
    throw new AppError('wallet_revoked', {
      fields: { wallet_id: walletId, revoked_at: row.revoked_at?.toISOString() ?? null },
    });
  return row;
}
