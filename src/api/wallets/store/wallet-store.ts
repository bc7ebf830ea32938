/**
 * The store the wallet wing reads and writes wallets through, in the words of ../wallet-service.ts, so that the
 * service holds the rules (who may see a wallet, the bounds, what a rotation or revocation writes in the audit
 * ledger) and its unit tests run on a fake (test/support/fake-wallet-store.ts). PostgreSQL implementation:
 * ./pg-wallet-store.ts, where every query of the wing's wallets lives.
 *
 * Defends: a change of a wallet taken on a stale read (each change is decided on the wallet read under its
 * lock, and written with its audit row in the same transaction); a creation overshooting the bounds (decided on
 * counts read under the owner's lock, held until the wallet's row commits). Does not defend: who the caller is
 * (the routes' bearer check) nor the rules themselves (the service's).
 */
import type { PolicySignatureForm } from '../../../../policy/signed-policy.js';
import type { WalletBoundsConfig } from '../../config/app-config.js';
import type { PageRequest } from '../../db/keyset-cursor.js';
import type { WalletCounts } from '../wallet-bounds.js';

/** A wallet as stored (the pay wing's snapshot reads the same row). */
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
  /**
   * The owner-signed document the signer accepted for `policy` (docs/adr/0012-owner-signed-policies.md): its
   * version and issued_at (bigint, as decimal strings), signature and the authority the signer named; null
   * (or absent, on rows read without them) when the signer holds none for the wallet's current address.
   */
  policy_version?: string | null;
  policy_issued_at?: string | null;
  policy_signature?: string | null;
  /** The EIP-712 form `policy_signature` is over (policy/signed-policy.ts); null on rows stored before it (hash). */
  policy_signature_form?: string | null;
  policy_authority_kind?: string | null;
  policy_authority_address?: string | null;
  status: 'active' | 'revoked';
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
}

/** A signed policy document as the signer accepted it (stored beside the policy it covers). */
export interface SignedPolicyDocument {
  version: number;
  issuedAt: number;
  signature: string;
  form: PolicySignatureForm;
  authority: { kind: 'owner' | 'approver' | 'first_signer'; address: string | null };
}

/** A key the signer generated for a wallet (only wrapped: `wallet_key_ref` names it in the signer). */
export interface WalletKey {
  address: string;
  public_key: string;
  wallet_key_ref: string;
}

/** A wallet to write, with its first key. */
export interface NewWallet {
  accountId: string;
  label: string | null;
  network: string;
  policy: Record<string, unknown>;
  key: WalletKey;
}

/**
 * A change of an active wallet: its policy replaced (unsigned, or with the owner-signed document the signer
 * accepted), a new key (the current one retired; a signed document names the old address, so it is dropped),
 * or revoked.
 */
export type WalletChange =
  | { kind: 'set_policy'; policy: Record<string, unknown> }
  | { kind: 'set_signed_policy'; policy: Record<string, unknown>; document: SignedPolicyDocument }
  | { kind: 'rotate'; key: WalletKey }
  | { kind: 'revoke' };

/** The audit row a write appends to the wallet's chain, at the time of the write. */
export interface WalletAuditNote {
  eventType: string;
  actor: string;
  payload: Record<string, unknown>;
}

/**
 * A retired key whose destruction in the signer failed earlier, with its account's key (which wraps it) and the
 * address it is the key of (the signer's destruction names it).
 */
export interface RetiredKey {
  wallet_id: string;
  /** The wallet's Treasury account (whose share of the signer calls the destruction waits for). */
  account_id: string;
  version: number;
  wallet_key_ref: string;
  account_key_ref: string;
  address: string;
}

export interface WalletRowPage {
  page: WalletRow[];
  nextCursor: string | null;
}

export interface WalletStore {
  /**
   * In one transaction holding the wallet count lock of the account's owner (an agent's platform account, else
   * the account): its counts, each read up to its bound + 1, go to `make`, which refuses or returns the wallet
   * (its key made meanwhile); the wallet, its first key and its `wallet.created` audit row (by `actor`) are
   * written.
   */
  createCounted(
    accountId: string,
    bounds: WalletBoundsConfig,
    actor: string,
    make: (counts: WalletCounts) => Promise<NewWallet>,
  ): Promise<WalletRow>;
  /** The wallet, whoever owns it and whatever its status; undefined when there is none. */
  find(walletId: string): Promise<WalletRow | undefined>;
  /** A page of the account's wallets (of `status`, if given), oldest first. */
  page(accountId: string, request: PageRequest & { status?: 'active' | 'revoked' | undefined }): Promise<WalletRowPage>;
  /** The ids of the account's active wallets on `network`, oldest first, at most `limit`. */
  activeOn(accountId: string, network: string, limit: number): Promise<string[]>;
  /** For each account, the first page of its active wallets (as `page` with `{limit, status: 'active'}`), in one read. */
  firstActivePages(accountIds: readonly string[], limit: number): Promise<Map<string, WalletRowPage>>;
  /**
   * Under the wallet's lock, in one transaction: the wallet as it stands goes to `decide`, which refuses or
   * names the change and its audit row; both are written, and the wallet as it stands after is returned.
   */
  change(
    walletId: string,
    decide: (current: WalletRow | undefined) => Promise<{ change: WalletChange; audit: WalletAuditNote }>,
  ): Promise<WalletRow>;
  /** Retired keys not destroyed yet (their destruction in the signer failed). */
  retiredKeys(): Promise<RetiredKey[]>;
  /** Forgets a destroyed key's reference (the key version's and, for a revoked wallet, the wallet's). */
  markKeyDestroyed(walletId: string, version: number): Promise<void>;
}
