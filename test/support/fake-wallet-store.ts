/**
 * An in-memory fake of the wallet wing's store (src/api/wallets/store/wallet-store.ts), for unit tests of the
 * wallet service without PostgreSQL: wallets and their key versions in maps, counts per Treasury account (a
 * test sets `agentCount` to count an agent's wallets apart), and every audit row appended, in order. One
 * change at a time, as the wallet's lock would have it. Never imported by production code.
 */
import type { WalletBoundsConfig } from '../../src/api/config/app-config.js';
import type { PageRequest } from '../../src/api/db/keyset-cursor.js';
import { keysetPage } from '../../src/api/db/keyset-cursor.js';
import type { WalletCounts } from '../../src/api/wallets/wallet-bounds.js';
import type {
  NewWallet,
  RetiredKey,
  WalletAuditNote,
  WalletChange,
  WalletRow,
  WalletRowPage,
  WalletStore,
} from '../../src/api/wallets/store/wallet-store.js';

interface KeyVersion {
  wallet_id: string;
  version: number;
  wallet_key_ref: string | null;
  /** The address the key is of (as wallet_keys.address). */
  address: string;
  retired: boolean;
  destroyed: boolean;
}

export class FakeWalletStore implements WalletStore {
  readonly wallets = new Map<string, WalletRow>();
  readonly keys: KeyVersion[] = [];
  readonly audit: Array<{ chainKey: string } & WalletAuditNote> = [];
  /** The account key that wraps each Treasury account's wallet keys. */
  readonly accountKeys = new Map<string, string>();
  /** Active wallets of the agent, when the account is an agent's (undefined: a Treasury account of no agent). */
  agentCount: number | undefined = undefined;
  private sequence = 0;
  private clockMs = Date.UTC(2026, 0, 1);

  async createCounted(
    accountId: string,
    bounds: WalletBoundsConfig,
    actor: string,
    make: (counts: WalletCounts) => Promise<NewWallet>,
  ): Promise<WalletRow> {
    const account = [...this.wallets.values()].filter(
      (w) => w.account_id === accountId && w.status === 'active',
    ).length;
    const w = await make({ agent: this.agentCount, account: Math.min(account, bounds.maxPerAccount + 1) });
    const now = this.tick();
    const id = `wal_${(++this.sequence).toString(16).padStart(24, '0')}`;
    const row: WalletRow = {
      id,
      account_id: w.accountId,
      label: w.label,
      network: w.network,
      ...w.key,
      key_version: 1,
      policy: w.policy,
      status: 'active',
      created_at: now,
      updated_at: now,
      revoked_at: null,
    };
    this.wallets.set(id, row);
    this.keys.push({
      wallet_id: id,
      version: 1,
      wallet_key_ref: w.key.wallet_key_ref,
      address: w.key.address,
      retired: false,
      destroyed: false,
    });
    this.audit.push({ chainKey: id, eventType: 'wallet.created', actor, payload: { account_id: w.accountId } });
    return row;
  }

  async find(walletId: string): Promise<WalletRow | undefined> {
    return this.wallets.get(walletId);
  }

  async page(accountId: string, request: PageRequest & { status?: 'active' | 'revoked' | undefined }) {
    const rows = [...this.wallets.values()].filter(
      (w) => w.account_id === accountId && (!request.status || w.status === request.status),
    );
    return keysetPage(rows.slice(0, request.limit + 1), request.limit);
  }

  async activeOn(accountId: string, network: string, limit: number): Promise<string[]> {
    return [...this.wallets.values()]
      .filter((w) => w.account_id === accountId && w.network === network && w.status === 'active')
      .slice(0, limit)
      .map((w) => w.id);
  }

  async firstActivePages(accountIds: readonly string[], limit: number): Promise<Map<string, WalletRowPage>> {
    const pages = new Map<string, WalletRowPage>();
    for (const accountId of accountIds) pages.set(accountId, await this.page(accountId, { limit, status: 'active' }));
    return pages;
  }

  async change(
    walletId: string,
    decide: (current: WalletRow | undefined) => Promise<{ change: WalletChange; audit: WalletAuditNote }>,
  ): Promise<WalletRow> {
    const current = this.wallets.get(walletId);
    const { change, audit } = await decide(current);
    const now = this.tick();
    const currentKey = this.keys.find((k) => k.wallet_id === walletId && k.version === current!.key_version)!;
    let updated: WalletRow = { ...current!, updated_at: now };
    if (change.kind === 'set_policy' || change.kind === 'set_signed_policy') updated.policy = change.policy;
    if (change.kind === 'revoke') {
      updated = { ...updated, status: 'revoked', revoked_at: now };
      currentKey.retired = true;
    }
    if (change.kind === 'rotate') {
      currentKey.retired = true;
      updated = { ...updated, ...change.key, key_version: current!.key_version + 1 };
      const { wallet_key_ref } = change.key;
      this.keys.push({
        wallet_id: walletId,
        version: updated.key_version,
        wallet_key_ref,
        address: change.key.address,
        retired: false,
        destroyed: false,
      });
    }
    this.wallets.set(walletId, updated);
    this.audit.push({ chainKey: walletId, ...audit });
    return updated;
  }

  async retiredKeys(): Promise<RetiredKey[]> {
    return this.keys
      .filter((k) => k.retired && !k.destroyed && k.wallet_key_ref !== null)
      .map((k) => ({
        wallet_id: k.wallet_id,
        version: k.version,
        wallet_key_ref: k.wallet_key_ref!,
        account_id: this.wallets.get(k.wallet_id)!.account_id,
        account_key_ref: this.accountKeys.get(this.wallets.get(k.wallet_id)!.account_id) ?? '',
        address: k.address,
      }));
  }

  async markKeyDestroyed(walletId: string, version: number): Promise<void> {
    const key = this.keys.find((k) => k.wallet_id === walletId && k.version === version)!;
    key.destroyed = true;
    key.wallet_key_ref = null;
    const wallet = this.wallets.get(walletId)!;
    if (wallet.status === 'revoked') this.wallets.set(walletId, { ...wallet, wallet_key_ref: null });
  }

  /** Each write a millisecond after the last, so pages keep their order. */
  private tick(): Date {
    this.clockMs += 1;
    return new Date(this.clockMs);
  }
}
