/**
 * What sign-in and sessions (../identity-service.ts) need from storage, in their words: nonces, the
 * identities an account holds, and the sessions it is issued. ./pg-identity-store.ts implements it over
 * PostgreSQL (every query of the identity wing is there).
 *
 * Defends: the identity service reaching a table directly. Does not defend: the rules of sign-in (the
 * service's: which nonce, which account, which session).
 */
import type { ParentCredential } from '../../auth/credential-lineage.js';
import type { StoreUnit, UnitRunner } from '../../db/store-unit.js';

/** An identity proven by a sign-in: a chain and its address (EVM addresses lower-cased). */
export interface IdentityKey {
  chain: string;
  address: string;
}

/** A session to write (its secret only as a hash). */
export interface NewSession {
  id: string;
  tokenHash: string;
  scopeType: 'account' | 'agent';
  scopeId: string;
  accountId: string;
  origin: 'sign_in' | 'pat_exchange';
  parentId: string | null;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  /** A SIWE sign-in's own message and signature (kept to name the owner to the signer later); else null. */
  signInProof: { message: string; signature: string } | null;
}

export interface IdentityStore extends UnitRunner {
  insertNonce(nonce: string, expiresAt: Date): Promise<void>;
  /** Deletes up to `limit` used or expired nonces, skipping rows another transaction holds; how many. */
  purgeDeadNonces(now: Date, limit: number): Promise<number>;
  /** Marks the nonce used if it is live at `now`; false when it is unknown, used or expired. */
  consumeNonce(unit: StoreUnit, nonce: string, now: Date): Promise<boolean>;
  /** Takes a lock per identity until the unit ends, in the order given. */
  lockIdentities(unit: StoreUnit, keys: readonly IdentityKey[]): Promise<void>;
  /** Which of these identities are known, and whose. */
  findIdentities(unit: StoreUnit, keys: readonly IdentityKey[]): Promise<Array<IdentityKey & { account_id: string }>>;
  /** A new platform account (the one a first sign-in creates). */
  createAccount(unit: StoreUnit, accountId: string, now: Date): Promise<void>;
  touchIdentity(unit: StoreUnit, key: IdentityKey, now: Date): Promise<void>;
  /** Links the identity to the account; false when another account's sign-in took it first. */
  linkIdentity(
    unit: StoreUnit,
    key: IdentityKey,
    accountId: string,
    at: { now: Date; linkedAt: Date | null },
  ): Promise<boolean>;
  insertSession(unit: StoreUnit, session: NewSession): Promise<void>;
  /** The agent and the account owning it. */
  agent(agentId: string): Promise<{ id: string; account_id: string } | undefined>;
  /** Locks the credential's row until the unit ends; false if there is none. */
  lockCredential(unit: StoreUnit, tokenId: string): Promise<boolean>;
  /** The live credential as a lineage parent (`invalid_token` when it is not live), read in the unit. */
  parentOf(unit: StoreUnit, tokenId: string, now: Date): Promise<ParentCredential>;
  /** The live sessions made from `patId`, newest first, after the first `keep`. */
  liveSessionsBeyond(unit: StoreUnit, patId: string, now: Date, keep: number): Promise<string[]>;
  /** The ids of the account's sessions not yet revoked. */
  unrevokedSessionsOf(unit: StoreUnit, accountId: string): Promise<string[]>;
  /** Ends the session (its first revocation time kept); undefined if it is no session. */
  endSession(unit: StoreUnit, sessionId: string, now: Date): Promise<{ id: string; revoked_at: Date } | undefined>;
  /** Revokes the credentials and everything made with them; every id of the subtree. */
  revokeTree(unit: StoreUnit, rootIds: readonly string[], at: Date): Promise<string[]>;
}
