/**
 * What the signer keeps about owner-signed policies, behind one interface (PostgreSQL in
 * ./pg-owner-policy-store.ts; an in-memory fake for unit tests): each account's policy authority, each
 * wallet's authority and current signed policy, and the spends it signed, which the spend windows are summed
 * from. The store is the signer's own (its own database and role): the API can neither read nor write it.
 *
 * Defends: two signers (or two requests) deciding one wallet's windows at once — `reserveSpend` and `setPolicy`
 * run under the wallet's row lock (a spend on a wallet without a policy under a share lock that orders it
 * before any policy signed meanwhile), and a spend is committed before the caller may release its signature; a policy replaced by
 * an older one (`setPolicy` hands the current version to the caller's check under the same lock).
 * Does not defend: what is decided — the callbacks are the pure checks of ./owner-policies.ts.
 */
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import type { PolicySignatureForm } from '../../policy/signed-policy.js';
import type { PolicyAuthority } from '../protocol/owner-policy-protocol.js';

/** A signed policy as the signer holds it. */
export interface StoredPolicy {
  policy: WalletPolicy;
  version: number;
  policyHash: string;
  issuedAt: number;
  signature: string;
}

/** A wallet's record: its authority (null: none yet) and its current signed policy (null: none yet). */
export interface WalletRecord {
  authority: PolicyAuthority | null;
  current: StoredPolicy | null;
  /**
   * Recorded under its account — made by `create_wallet_key`, or adopted after a payment proved its key the
   * account's — rather than first seen by a policy: with no authority, its account had none on record (made before
   * the store kept them), and it is never left to a first signer (./owner-policies.ts).
   */
  underAccount: boolean;
}

/** What a spend's windows need to be summed over: the earliest instant any rule of the policy looks back to. */
export interface SpendQuery {
  address: string;
  /** Windows start: sums and counts are over spends at or after these instants. */
  dayStart: Date;
  weekStart: Date;
  monthStart: Date;
  /** Exclusive: the velocity count is over spends after it; null when the policy has no velocity cap. */
  velocityStart: Date | null;
}

export interface Spend {
  address: string;
  /** Raw token units (USDC: micro-USD). */
  amount: bigint;
  payee: string;
  at: Date;
}

/** What `reserveSpend`'s decision returns: record the spend, or refuse with whatever the caller reports. */
export type SpendVerdict<R> = { record: true } | { record: false; refusal: R };

/** What `reserveSpend` did: recorded the spend (decided under a signed policy or not), refused it, or neither. */
export type ReservedSpend<R> =
  { kind: 'recorded'; id: string; signed: boolean } | { kind: 'refused'; refusal: R } | { kind: 'unrecorded' };

/**
 * A spend asked for: its outcome, and whether this process foresaw it allowed (./spend-foresight.ts) — true only
 * when the signature may be made while the spend commits; it still leaves only once `outcome` says recorded.
 */
export interface Reservation<R> {
  foreseen: boolean;
  outcome: Promise<ReservedSpend<R>>;
  /**
   * Tells the store that the caller waits for `running` anyway (the signature made while the spend commits), so
   * the spend's commit may gather others until it settles (./spend-batcher.ts). Call in the same turn.
   */
  waitFor?: (running: Promise<unknown>) => void;
}

export interface OwnerPolicyStore {
  /** Migrates the store's schema (idempotent); called once before the signer serves. */
  prepare(): Promise<void>;
  /** Records an account key's authority (by the key reference's hash); a second call for one key changes nothing. */
  recordAccount(accountKeyHash: string, authority: PolicyAuthority, proof: string | null): Promise<void>;
  /** The account's authority, or undefined when the signer has no record of the account. */
  accountAuthority(accountKeyHash: string): Promise<PolicyAuthority | undefined>;
  /** Records a new wallet under its account's authority (null: the account has none on record). */
  recordWallet(address: string, accountKeyHash: string, authority: PolicyAuthority | null): Promise<void>;
  /** The wallet's record, or undefined when the signer has none (a wallet made before it kept them). */
  wallet(address: string): Promise<WalletRecord | undefined>;
  /**
   * Under the wallet's row lock (made if missing): `decide` sees the record and returns the new policy, the
   * authority to keep, the address that signed the document and the form its signature is in (both the history's:
   * an approver's address is not pinned on the wallet, and the form is what the signature is checked again under;
   * absent, `policy_hash`), or throws; the new policy and its history row are committed before this resolves.
   */
  setPolicy(
    address: string,
    decide: (record: WalletRecord) => {
      authority: PolicyAuthority;
      policy: StoredPolicy;
      signedBy: string;
      form?: PolicySignatureForm;
    },
  ): Promise<{ authority: PolicyAuthority; policy: StoredPolicy }>;
  /**
   * A wallet with a signed policy: under its row lock, `decide` sees the policy and the spend state the query
   * describes; when it says record, the spend is committed before this resolves and its id returned
   * (`signed: true`). A wallet without one: the spend is recorded undecided (`signed: false`), ordered before
   * any policy signed meanwhile, so that policy's windows count it — committed before this resolves, or just after
   * while the store's word that the wallet has no policy is younger than a lease (./open-spend-leases.ts). A wallet the signer has no record of:
   * nothing is read or recorded (`{ kind: 'unrecorded' }`). `foreseen`: see `Reservation`.
   */
  reserveSpend<R>(
    spend: Spend,
    query: (policy: WalletPolicy) => SpendQuery,
    decide: (current: StoredPolicy, state: SpendState) => SpendVerdict<R>,
  ): Reservation<R>;
  /** Removes a spend whose signature never left (the HSM failed, another limit refused it). */
  giveBack(id: string): Promise<void>;
  close(): Promise<void>;
}
