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
 * network (an advisory lock per name, a unique index as the second line).
 * Does not defend: a network the operator did not list (no collection there: `collectsOn` is false and the
 * seller's paywall has no terms on it); the key backend's own availability (creation fails with the signer).
 */
import type { Knex } from 'knex';
import { getAddress } from 'viem';
import type { ChainRegistry } from '../../../shared/chain-registry.js';
import type { AccountService } from '../../services/account-service.js';
import type { WalletService } from '../../services/wallet-service.js';

/** Who the platform's wallets are recorded as created by (audit actor). */
export const PLATFORM_ACTOR = 'treasury-platform';
const PLATFORM_OWNER = { owner_type: 'platform', owner_id: 'merchant_of_record' } as const;

export interface CollectionWallet {
  seller_id: string;
  network: string;
  wallet_id: string;
  /** Checksummed. */
  address: string;
  account_id: string;
}

export interface PlatformWalletOptions {
  /** CAIP-2 networks the platform collects on. */
  networks: readonly string[];
  /** The policy every collection wallet is created with (it pays its seller out). */
  policy: Record<string, unknown>;
}

export class PlatformWallets {
  constructor(
    private readonly knex: Knex,
    private readonly accounts: Pick<AccountService, 'create'>,
    private readonly wallets: Pick<WalletService, 'create'>,
    private readonly chains: ChainRegistry,
    private readonly options: PlatformWalletOptions,
  ) {}

  /** Whether the platform collects on `network` (a CAIP-2 id or chain name the registry knows, and listed). */
  collectsOn(network: string): boolean {
    const chain = this.chains.resolve(network);
    return !!chain && this.options.networks.includes(chain.network);
  }

  /** The seller's collection wallet on `network` if it exists (no creation). */
  async find(sellerId: string, network: string, trx: Knex | Knex.Transaction = this.knex) {
    const row = (await trx('platform_collection_wallets as c')
      .join('wallets as w', 'w.id', 'c.wallet_id')
      .where({ 'c.seller_id': sellerId, 'c.network': network })
      .first('c.seller_id', 'c.network', 'c.wallet_id', 'c.address', 'w.account_id')) as
      (Omit<CollectionWallet, 'address'> & { address: string }) | undefined;
    return row ? { ...row, address: getAddress(row.address.trim()) } : undefined;
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
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', [`collect:${sellerId}:${chain.network}`]);
      const raced = await this.find(sellerId, chain.network, trx);
      if (raced) return raced;
      const wallet = await this.wallets.create(
        accountId,
        { label: `collection ${sellerId}`, chain: chain.network, policy: this.options.policy },
        PLATFORM_ACTOR,
      );
      await trx('platform_collection_wallets').insert({
        seller_id: sellerId,
        network: chain.network,
        wallet_id: wallet.id,
        address: wallet.address.toLowerCase(),
        created_at: new Date(),
      });
      return {
        seller_id: sellerId,
        network: chain.network,
        wallet_id: wallet.id,
        address: getAddress(wallet.address),
        account_id: accountId,
      };
    });
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
  private async platformAccount(): Promise<string> {
    const existing = async (db: Knex | Knex.Transaction) =>
      (await db('treasury_accounts').where(PLATFORM_OWNER).first('id')) as { id: string } | undefined;
    const found = await existing(this.knex);
    if (found) return found.id;
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', ['platform-account']);
      const raced = await existing(trx);
      if (raced) return raced.id;
      return (await this.accounts.create(PLATFORM_OWNER, PLATFORM_ACTOR, undefined, trx)).id;
    });
  }
}
