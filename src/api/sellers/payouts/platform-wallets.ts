/**
 * The platform's own wallets: where the buyers of a `platform_mor` seller pay (its collection wallet on a
 * network) and what pays the seller out. Each is an ordinary Treasury wallet — a key generated in the HSM (or
 * KMS) through the signer, stored wrapped, with its own policy and audit chain — of one platform Treasury
 * account (owner_type `platform`), both created on first use. One collection wallet per seller and network
 * (table platform_collection_wallets), so a transfer to it belongs to that seller by its address alone: with one
 * address shared by every seller, any seller could report another seller's buyer's payment and be owed it.
 *
 * Defends: a seller being owed money that never reached the platform (its rows verify against this address,
 * src/api/sellers/ledger/ledger-verifier.ts); two processes creating two accounts or two wallets for one seller and
 * network (an advisory lock per name, a unique index as the second line); one tenant's sellers taking every
 * tenant's collection wallets (the platform's account has no wallet bound shared by all: a tenant's part is
 * bounded by its sellers, ../../wallets/wallet-bounds.ts); many first collection wallets asked for at once
 * holding every pooled connection (a creation holds its lock's transaction while the wallet takes a second
 * connection: two at a time per process, ../../db/nested-acquire-limit.ts).
 * Does not defend: a network the operator did not list (no collection there: `collectsOn` is false and the
 * seller's paywall has no terms on it); the key backend's own availability (creation fails with the signer).
 * Reads and writes through `CollectionWalletStore` (../store/payout-stores.ts).
 */
import type { ChainRegistry } from '../../../shared/chain-registry.js';
import type { AccountService } from '../../platform/account-service.js';
import type { WalletService } from '../../wallets/wallet-service.js';
import { NestedAcquireLimit } from '../../db/nested-acquire-limit.js';
import type { CollectionWallet, CollectionWalletStore } from '../store/payout-stores.js';

export type { CollectionWallet } from '../store/payout-stores.js';

/** Who the platform's wallets are recorded as created by (audit actor). */
export const PLATFORM_ACTOR = 'treasury-platform';
const PLATFORM_OWNER = { owner_type: 'platform', owner_id: 'merchant_of_record' } as const;

export interface PlatformWalletOptions {
  /** CAIP-2 networks the platform collects on. */
  networks: readonly string[];
  /** The policy every collection wallet is created with (it pays its seller out). */
  policy: Record<string, unknown>;
}

/** What the platform's wallets are built from (wired once in src/api/app.ts). */
export interface PlatformWalletsDeps {
  store: CollectionWalletStore;
  /** The platform's own Treasury account is an account like any other. */
  accounts: Pick<AccountService, 'create'>;
  /** Each collection wallet is a wallet like any other. */
  wallets: Pick<WalletService, 'create'>;
  chains: ChainRegistry;
  options: PlatformWalletOptions;
}

export class PlatformWallets {
  private readonly store: CollectionWalletStore;
  private readonly accounts: PlatformWalletsDeps['accounts'];
  private readonly wallets: PlatformWalletsDeps['wallets'];
  private readonly chains: ChainRegistry;
  private readonly options: PlatformWalletOptions;
  /** Creations at once in this process: each holds two pooled connections. */
  private readonly creations = new NestedAcquireLimit(2);

  constructor(deps: PlatformWalletsDeps) {
    ({
      store: this.store,
      accounts: this.accounts,
      wallets: this.wallets,
      chains: this.chains,
      options: this.options,
    } = deps);
  }

  /** Whether the platform collects on `network` (a CAIP-2 id or chain name the registry knows, and listed). */
  collectsOn(network: string): boolean {
    const chain = this.chains.resolve(network);
    return !!chain && this.options.networks.includes(chain.network);
  }

  /** The seller's collection wallet on `network` if it exists (no creation). */
  find(sellerId: string, network: string): Promise<CollectionWallet | undefined> {
    return this.store.find(sellerId, network);
  }

  /**
   * The seller's collection wallet on `network`, created (and the platform account with it) on first use;
   * undefined when the platform does not collect there.
   */
  async ensure(sellerId: string, network: string): Promise<CollectionWallet | undefined> {
    const chain = this.chains.resolve(network);
    if (!chain || !this.collectsOn(chain.network)) return undefined;
    const found = await this.find(sellerId, chain.network);
    if (found) return found;
    const accountId = await this.platformAccount();
    return this.creations.run(() =>
      this.store.ensure(sellerId, chain.network, accountId, () =>
        this.wallets.create(
          accountId,
          { label: `collection ${sellerId}`, chain: chain.network, policy: this.options.policy },
          PLATFORM_ACTOR,
        ),
      ),
    );
  }

  /**
   * Where a seller's buyers pay on `network`: its collection wallet's address (created on first use) when the
   * platform is its merchant of record and collects there; null otherwise (a `direct` seller's buyers pay its
   * own pay-to; a `platform_mor` seller cannot be paid on a network the platform does not collect on).
   */
  async payToFor(seller: { id: string; payout_mode: string }, network: string | undefined): Promise<string | null> {
    if (seller.payout_mode !== 'platform_mor' || network === undefined) return null;
    return (await this.ensure(seller.id, network))?.address ?? null;
  }

  /** The platform's Treasury account, created on first use (one per database: a unique index). */
  private platformAccount(): Promise<string> {
    // Its wallets' policies are the deployment approver's to sign (docs/adr/0012-owner-signed-policies.md).
    return this.store.platformAccount(
      async (tx) => (await this.accounts.create(PLATFORM_OWNER, PLATFORM_ACTOR, { kind: 'approver' }, tx)).id,
    );
  }
}
