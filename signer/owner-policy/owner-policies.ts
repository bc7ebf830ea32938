/**
 * The signer's second decision (docs/adr/0012-owner-signed-policies.md): each wallet's policy authority,
 * recorded when its account and the wallet are made; the policy documents that authority signed
 * (policy/signed-policy.ts), kept by the signer in its own store; and, before any payment signature, the same
 * pure policy rules the API applies (policy/evaluate-policy.ts) evaluated again on the fields the signer
 * decodes itself (payee, amount, time) and on the spends it recorded itself.
 *
 * Defends, against a front that lies or was taken over: a policy the authority did not sign, an older one
 * sent again, a version that skips ahead (the next is always the current one plus one: a front that named the
 * owner a far version, signed and kept, would leave no version above it), a document held back and applied late
 * (signed more than `MAX_POLICY_AGE_SECONDS` ago, or before the one the signer holds), an authority named
 * without the owner's own signature, a payment the signed policy refuses
 * (per payment, each window, velocity, counterparty lists, cooling-off), a window overrun after a crash (the
 * spend is committed before the signature leaves, and a signature that does not leave is given back).
 * And a wallet key destroyed against its signed policy (`assertKeyDestructionAllowed`: only with
 * `allow_key_destruction`).
 * And a wallet recorded under an account the store has no authority for (made before it kept them) bound by
 * whoever signs first: it is the approver's (`NO_ACCOUNT_AUTHORITY`).
 * And policy state kept for an address whose key the signer does not hold (a made-up one, to grow its store): refused
 * before any write (./held-wallet-keys.ts).
 * And an Ed25519 signature named as the `policy_text` form (`rule: signature_form`): that form is EIP-712's only.
 * Does not defend: the capability caps (the capability is the front's word, which the signer cannot check:
 * they are left out here and stay the API's), wallets that have no signed policy yet (the signer's ceilings
 * only), whom the front names as owner when an account is made (the ADR says what that leaves), and a wallet the
 * store has no record of that has not paid since (its key held): bound to its first signer (trust on first use, as
 * the ADR says).
 */
import { createHash } from 'node:crypto';
import { displayCounterparty } from '../../policy/counterparty-address.js';
import { policyViolations } from '../../policy/evaluate-policy.js';
import { parsePolicy } from '../../policy/parse-policy.js';
import { POLICY_LIMITS } from '../../policy/policy-schema.js';
import { policyWindows, velocityWindowStart } from '../../policy/policy-windows.js';
import type { ParsedPolicy, Violation } from '../../policy/policy-types.js';
import { DEFAULT_POLICY_SIGNATURE_FORM, policyDocumentHash } from '../../policy/signed-policy.js';
import type {
  AuthorityRequest,
  GetWalletPolicyResult,
  PolicyAuthority,
  PolicyViolationDetail,
  SetWalletPolicyParams,
  SetWalletPolicyResult,
  WalletKeyRefs,
} from '../protocol/owner-policy-protocol.js';
import { SignerFault } from '../signer-error.js';
import { readPolicySignature, signedByAuthority, verifiedOwnerAddress } from './authority-proofs.js';
import { HeldWalletKeys, type ProveWalletKey } from './held-wallet-keys.js';
import type { OwnerPolicyStore, Reservation, ReservedSpend, StoredPolicy, WalletRecord } from './owner-policy-store.js';

/**
 * The authority of a wallet recorded under an account the store has no authority for (made before it kept them):
 * the deployment's approver, as for an account whose front named nobody — never the wallet's first signer.
 */
const NO_ACCOUNT_AUTHORITY: PolicyAuthority = { kind: 'approver', address: null };

/** A document dated this far ahead of the signer's clock is refused (clock skew between signing machines). */
const MAX_FUTURE_SKEW_SECONDS = 300;
/**
 * A document signed longer ago than this is refused: the owner signs at the moment of the change, so one the front
 * held back (said to have failed) cannot be applied a day later; the owner signs it again.
 */
export const MAX_POLICY_AGE_SECONDS = 86_400;
/** The last payment is looked for this far back: the longest cooling-off a policy may set, plus a day. */
export const LOOK_BACK_SECONDS = POLICY_LIMITS.maxCoolingOffSeconds + 86_400;

/** A payment's spend asked of the store (`OwnerPolicies.reserve`). */
export interface PaymentReservation {
  foreseen: boolean;
  spend: Promise<string | undefined>;
  /** The signature is being made while the spend commits: the commit may gather others until it is (same turn). */
  waitFor?: (signing: Promise<unknown>) => void;
}

/**
 * Each stored policy parsed once, as the signer evaluates it: every rule but the capability caps (the capability is
 * the front's word). The store's cache hands the same document to every decision on it.
 */
const parsedPolicies = new WeakMap<object, ParsedPolicy>();

function signerPolicy(policy: StoredPolicy['policy']): ParsedPolicy {
  let parsed = parsedPolicies.get(policy);
  if (!parsed) {
    parsed = { ...parsePolicy(policy), capabilityCaps: undefined };
    parsedPolicies.set(policy, parsed);
  }
  return parsed;
}

/** What a refusal carries to `settle`: the violated rules and the policy version that refused. */
type Refusal = { violations: Violation[]; version: number };

/** The key reference as the store names it: its SHA-256 (references are long and carry no secret, but need not be kept). */
export function accountKeyHash(accountKeyRef: string): string {
  return createHash('sha256').update(accountKeyRef).digest('hex');
}

function violationDetail(v: Violation): PolicyViolationDetail {
  const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 64) : undefined);
  const limit = text(v.limit);
  const attempted = text(v.attempted);
  return { rule: v.rule, ...(limit ? { limit } : {}), ...(attempted ? { attempted } : {}) };
}

export interface OwnerPoliciesOptions {
  store: OwnerPolicyStore;
  /** The deployment's policy approver (TREASURY_SIGNER_POLICY_APPROVER), or null when none is configured. */
  approver: string | null;
  /** Told of every payment signature's policy state (the metric). */
  observed?: (state: 'owner_signed' | 'ceilings_only') => void;
  /** Told the first violated rule of every payment the signed policy refuses (the metric). */
  refused?: (rule: string) => void;
}

export class OwnerPolicies {
  /** The wallets this process knows it holds the key of (./held-wallet-keys.ts). */
  private readonly held = new HeldWalletKeys();

  constructor(private readonly options: OwnerPoliciesOptions) {}

  /**
   * The authority of a new account: the owner named with their own sign-in, SIWE or SIWS (signed by the key
   * of the address it names: ./authority-proofs.ts), or the deployment's approver (also when the front names
   * nobody).
   */
  async accountAuthority(
    request: AuthorityRequest | undefined,
  ): Promise<{ authority: PolicyAuthority; proof: string | null }> {
    if (!request || request.kind === 'approver')
      return { authority: this.resolve({ kind: 'approver', address: null }), proof: null };
    const address = await verifiedOwnerAddress(request);
    if (address === undefined) {
      throw new SignerFault(
        'policy_signature_invalid',
        "the owner's sign-in does not verify: it must be signed by the key of the address it names, which must be the owner's",
        { rule: 'authority_proof' },
      );
    }
    return { authority: { kind: 'owner', address }, proof: JSON.stringify(request.sign_in) };
  }

  async recordAccount(accountKeyRef: string, authority: PolicyAuthority, proof: string | null): Promise<void> {
    await this.stored(() => this.options.store.recordAccount(accountKeyHash(accountKeyRef), authority, proof));
  }

  /**
   * Records a new wallet under its account's authority; returns the authority its policy is checked against: the
   * account's, or the approver's when the account predates the store's records (`NO_ACCOUNT_AUTHORITY`; the row keeps
   * no authority, and names the account).
   */
  async recordWallet(address: string, accountKeyRef: string): Promise<PolicyAuthority> {
    const hash = accountKeyHash(accountKeyRef);
    return this.stored(async () => {
      const authority = (await this.options.store.accountAuthority(hash)) ?? null;
      await this.options.store.recordWallet(address, hash, authority);
      this.held.remember(address);
      return this.resolve(authority ?? NO_ACCOUNT_AUTHORITY);
    });
  }

  /**
   * Records a wallet the store has no record of under its account's authority, after a signature proved the wallet's
   * key is that account's; nothing when it has one. Never fails the payment: a store that cannot be reached now is
   * asked again at the wallet's next payment.
   */
  async adoptWallet(address: string, accountKeyRef: string): Promise<void> {
    // The signature proved the key held, whether the store records it now or not.
    this.held.remember(address);
    await this.recordWallet(address, accountKeyRef).catch(() => undefined);
  }

  /**
   * Resolves once `address`'s key is shown held (./held-wallet-keys.ts); without `key` and `prove` (a policy receipt),
   * only by what the signer knows already: made or paid here, or recorded under its account.
   */
  async assertHeld(address: string, key?: WalletKeyRefs, prove?: ProveWalletKey): Promise<void> {
    const recordedUnderAccount = async () =>
      (await this.stored(() => this.options.store.wallet(address)))?.underAccount === true;
    await this.held.assertHeld(address, { recordedUnderAccount, key, prove });
  }

  async get(address: string): Promise<GetWalletPolicyResult> {
    const record = await this.stored(() => this.options.store.wallet(address));
    const current = record?.current;
    // No authority on the row: the approver's if recorded under its account, else (null) its first signer's, to come.
    const authority = record?.authority ?? (record?.underAccount ? NO_ACCOUNT_AUTHORITY : null);
    return {
      address: displayCounterparty(address),
      authority: authority && this.resolve(authority),
      current: current
        ? { version: current.version, policy_hash: current.policyHash, issued_at: current.issuedAt }
        : null,
    };
  }

  /**
   * Before a wallet key is destroyed (../key-destruction/): a wallet whose owner-signed policy does not carry
   * `allow_key_destruction: true` is refused with `key_destruction_not_allowed`. Read from the store now, never from a
   * cache (a newer policy without the flag stops the next destroy); a wallet with no signed policy, or one the store
   * has no record of, passes. Fails closed: a store that cannot answer is `policy_store_unavailable`.
   */
  async assertKeyDestructionAllowed(address: string): Promise<void> {
    const current = (await this.stored(() => this.options.store.wallet(address)))?.current;
    if (!current || signerPolicy(current.policy).allowKeyDestruction === true) return;
    throw new SignerFault(
      'key_destruction_not_allowed',
      `the wallet's owner-signed policy (version ${current.version}) does not allow its key to be destroyed`,
      { rule: 'owner_policy', current_version: current.version },
    );
  }

  /**
   * Verifies a signed policy document against the wallet's authority and keeps it if it is the next version (the
   * current one plus one: `assertNextDocument`), signed within `MAX_POLICY_AGE_SECONDS` and not before the current one
   * — only for a wallet whose key the signer holds (./held-wallet-keys.ts; `prove`: the backend's proof of
   * `params.wallet_key`), checked before anything is written.
   */
  async set(params: SetWalletPolicyParams, nowSeconds: number, prove?: ProveWalletKey): Promise<SetWalletPolicyResult> {
    if (params.issued_at > nowSeconds + MAX_FUTURE_SKEW_SECONDS) {
      throw new SignerFault('policy_signature_invalid', 'the policy document is dated in the future', {
        rule: 'issued_at',
      });
    }
    if (params.issued_at < nowSeconds - MAX_POLICY_AGE_SECONDS) {
      throw new SignerFault(
        'policy_signature_invalid',
        `the policy document was signed more than ${MAX_POLICY_AGE_SECONDS} seconds ago: sign it again`,
        { rule: 'issued_at_expired' },
      );
    }
    const read = await readPolicySignature(params);
    // The text form is an EIP-712 form: an Ed25519 statement has one spelling only (policy/policy-statement.ts).
    if (read.curve === 'ed25519' && params.form === 'policy_text')
      throw new SignerFault('policy_signature_invalid', 'an Ed25519 policy signature has no policy_text form', {
        rule: 'signature_form',
      });
    if (read.curve === 'secp256k1' && !read.recovered)
      throw new SignerFault('policy_signature_invalid', 'the policy signature does not recover', { rule: 'signature' });
    await this.assertHeld(params.address, params.wallet_key, prove);
    const policy: StoredPolicy = {
      policy: params.policy,
      version: params.version,
      policyHash: policyDocumentHash(params.policy),
      issuedAt: params.issued_at,
      signature: params.signature,
    };
    const kept = await this.stored(() =>
      this.options.store.setPolicy(params.address, (record) => {
        const authority = this.authorityOf(record, read.curve === 'secp256k1' ? read.recovered : null);
        const expected = this.resolve(authority).address;
        if (expected === null || !signedByAuthority(params, read, expected)) {
          throw new SignerFault(
            'policy_signature_invalid',
            "the policy is not signed by the wallet's policy authority",
            {
              rule: authority.kind === 'approver' && expected === null ? 'no_approver_configured' : 'authority',
            },
          );
        }
        assertNextDocument(params, record.current);
        // The history names the address that signed (an approver's is not pinned on the wallet) and the form.
        return { authority, policy, signedBy: expected, form: params.form ?? DEFAULT_POLICY_SIGNATURE_FORM };
      }),
    );
    return {
      address: displayCounterparty(params.address),
      version: kept.policy.version,
      policy_hash: kept.policy.policyHash,
      authority: this.resolve(kept.authority),
    };
  }

  /**
   * Before a payment signature: evaluate the wallet's signed policy on what the signer decoded and record the
   * spend in the signer's store. `spend` resolves once it is committed, with the spend to give back if the
   * signature does not leave (undefined when nothing was recorded: no amount, or a wallet the signer has no record
   * of), or rejects with the refusal. `foreseen`: the store expects it allowed (./spend-foresight.ts), so the
   * signature may be made meanwhile.
   */
  reserve(address: string, amount: bigint, payee: string, now: Date): PaymentReservation {
    if (amount === 0n) return { foreseen: false, spend: Promise.resolve(undefined) };
    let reservation: Reservation<Refusal>;
    try {
      reservation = this.options.store.reserveSpend<Refusal>(
        { address, amount, payee, at: now },
        (policy) => {
          const windows = policyWindows(now);
          return { address, ...windows, velocityStart: velocityWindowStart(policy, now) };
        },
        (current, state) => {
          const request = { kind: 'pay', amountMicro: amount, to: payee } as const;
          const violations = policyViolations(signerPolicy(current.policy), request, state, now);
          return violations.length === 0
            ? { record: true }
            : { record: false, refusal: { violations, version: current.version } };
        },
      );
    } catch (err) {
      return { foreseen: false, spend: this.stored(() => Promise.reject(err)) };
    }
    return {
      foreseen: reservation.foreseen,
      spend: this.stored(() => reservation.outcome).then((o) => this.settle(o)),
      waitFor: reservation.waitFor,
    };
  }

  /** The spend's id, or the refusal thrown as the same `policy_denied` as the API's own. */
  private settle(outcome: ReservedSpend<Refusal>): string | undefined {
    this.options.observed?.(
      outcome.kind === 'unrecorded' || (outcome.kind === 'recorded' && !outcome.signed)
        ? 'ceilings_only'
        : 'owner_signed',
    );
    if (outcome.kind === 'unrecorded') return undefined;
    if (outcome.kind === 'recorded') return outcome.id;
    const { violations, version } = outcome.refusal;
    this.options.refused?.(violations[0]!.rule);
    throw new SignerFault(
      'policy_denied',
      `the wallet's owner-signed policy (version ${version}) refuses this payment: ${violations.map((v) => v.rule).join(', ')}`,
      {
        rule: violations[0]!.rule,
        violations: violations.slice(0, 16).map(violationDetail),
        current_version: version,
      },
    );
  }

  async giveBack(id: string | undefined): Promise<void> {
    if (id !== undefined) await this.stored(() => this.options.store.giveBack(id));
  }

  close(): Promise<void> {
    return this.options.store.close();
  }

  /**
   * Whom a wallet's policy must be signed by: its recorded authority; with none, the approver if the wallet was
   * recorded under its account (whose authority the store never had: `NO_ACCOUNT_AUTHORITY`); else — a wallet the
   * signer made no record of, made before it kept them and not paid since — its first signer, `first` (an EIP-712
   * one: an Ed25519 signature names no key by itself; null: none can bind).
   */
  private authorityOf(record: WalletRecord, first: string | null): PolicyAuthority {
    if (record.authority) return record.authority;
    return record.underAccount ? NO_ACCOUNT_AUTHORITY : { kind: 'first_signer', address: first };
  }

  /** An approver authority names the configured approver (read now: rotating it is a configuration change). */
  private resolve(authority: PolicyAuthority): PolicyAuthority {
    return authority.kind === 'approver' ? { kind: 'approver', address: this.options.approver } : authority;
  }

  /** Store failures become `policy_store_unavailable` (fail closed); the signer's own refusals pass through. */
  private async stored<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof SignerFault) throw err;
      throw new SignerFault('policy_store_unavailable', "the signer's policy store cannot be reached", undefined, {
        cause: err,
      });
    }
  }
}

/**
 * A document follows the one the signer holds: its version is exactly the next (`policy_version_stale`, with
 * `current_version`; `rule: version_gap` when it skips ahead — the API names `next_version` = current + 1, and a
 * version far ahead, once kept, would leave the owner none above it), and it was not signed before the current one
 * (`policy_signature_invalid`, `rule: issued_at_before_current`: a document held back while a later one was applied).
 */
function assertNextDocument(params: SetWalletPolicyParams, current: StoredPolicy | null): void {
  const next = (current?.version ?? 0) + 1;
  const held = current ? { current_version: current.version } : {};
  if (params.version < next) {
    throw new SignerFault(
      'policy_version_stale',
      `policy version ${params.version} is not above the current version ${next - 1}`,
      held,
    );
  }
  if (params.version > next) {
    throw new SignerFault(
      'policy_version_stale',
      `policy version ${params.version} skips ahead: the next version is ${next}`,
      { rule: 'version_gap', ...held },
    );
  }
  if (current && params.issued_at < current.issuedAt) {
    throw new SignerFault(
      'policy_signature_invalid',
      `the policy document was signed before the current version ${current.version}: sign it again`,
      { rule: 'issued_at_before_current' },
    );
  }
}
