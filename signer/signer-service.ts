/**
 * What each protocol method does, independent of transport: re-check the static invariants, compute the EIP-712
 * digest from the structured authorization (EIP-3009, Permit2 with the x402 upto witness, or an EIP-2612 permit to
 * Permit2), take the signature out of the wallet's own rolling ceilings (./limits/wallet-limiter.ts; a policy receipt
 * out of its receipt ceilings only, so receipts never refuse its payments), sign through the backend, finalise
 * (low-S, yParity, recovered address = wallet address) — and only then return.
 *
 * Protects against: returning anything but the protocol's result fields (results are built field by
 * field, never spread from backend objects), signing anything the signer did not hash itself, and a front
 * that asks for more than the signer's own limits allow: the per-signature maximum (`value_max`) and the
 * per-wallet ceilings are checked and recorded with no await between the check, the record and the call
 * to the HSM, so concurrent requests cannot overshoot; a signature that never leaves (the HSM failed, it
 * recovers to another address) is given back. An `upto` authorization counts its signed maximum.
 * A payment of a wallet with an owner-signed policy leaves only after its spend committed in the signer's store;
 * the HSM may sign it while the commit runs, when the store foresees it allowed (./owner-policy/spend-foresight.ts).
 * A wallet the store has no record of (made before it kept them) is recorded under its account's authority once a
 * payment signature proved its key is that account's, so that no other key can bind its policy afterwards.
 * Policy state is kept only for wallets whose key it holds (./owner-policy/held-wallet-keys.ts).
 * A Solana payment (`sign_solana_transaction`) is decoded and checked the same way before its message bytes
 * are signed with Ed25519 (./solana/), and its amount counts in the same owner-signed policy and ceilings.
 * `destroy_wallet_key` (./key-destruction/): with a policy store, a key is destroyed only once it proved to be the
 * named address's and that wallet's owner-signed policy, if any, allows it (`allow_key_destruction`); and once a
 * destroy has answered, no signature of that key leaves — each is checked right before it is returned, after every
 * await of its path, and refused with `key_destroyed` (its ceilings and spend given back) while a destroy of the key
 * is under way or done.
 * Any wallet key not the account's is one `key_not_found`, whatever its curve or state (./ecdsa/secp256k1-account-key.ts).
 * Known limits: who asked (socket permissions) and spend policy (the front, under its advisory lock); the
 * ceilings' restart hole (see ./limits/wallet-limiter.ts); the key of a wallet without a signed policy (or whose
 * policy allows it) is destroyed on the front's word, as before.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { bytesToHex } from 'viem';
import {
  aaddress,
  assertValue,
  assertEip2612PermitInvariants,
  assertPermit2Invariants,
  assertTransferInvariants,
} from './assert.js';
import type { KeyBackend, SignDigestOptions } from './backends/key-backend.js';
import type { SignerInvariants } from './config/signer-config.js';
import { finalizeSignature, rememberWalletKey } from './ecdsa/finalize-signature.js';
import { asWalletKeyOfAccount, signDigestOfAccount } from './ecdsa/secp256k1-account-key.js';
import { eip2612PermitDigest } from './eip2612/hash-eip2612-permit.js';
import { transferAuthorizationDigest } from './eip3009/hash-transfer-authorization.js';
import { KeyDestructions } from './key-destruction/key-destructions.js';
import { proveWalletKey } from './key-destruction/prove-wallet-key.js';
import type { LimitReceipt, SignatureKind, WalletLimiter } from './limits/wallet-limiter.js';
import { permit2WitnessTransferDigest } from './permit2/hash-permit2-witness-transfer.js';
import type {
  SignerLimitName,
  SignerMethod,
  SignerRequest,
  SignerResult,
  SignSolanaTransactionParams,
} from './protocol/signer-protocol.js';
import type { OwnerPolicies, PaymentReservation } from './owner-policy/owner-policies.js';
import { signAfterCommitStarts } from './owner-policy/sign-after-commit-starts.js';
import { attestWalletPolicy } from './owner-policy/policy-receipts.js';
import { SignerFault } from './signer-error.js';
import { signEd25519OfAccount } from './solana/ed25519-account-key.js';
import { assertEd25519Signature } from './solana/ed25519-signature.js';
import { receiptMessageSigning } from './solana/policy-receipt-message.js';
import { checkSolanaPaymentRequest } from './solana/solana-payment-request.js';
import { walletAddress, walletKeyResult } from './wallet-key-result.js';

export interface SignerServiceLimits {
  /** The rolling ceilings per wallet; without it only the static invariants (`value_max` among them) apply. */
  wallets?: WalletLimiter;
  /** Told the limit's name on every refusal by a limit (the per-signature maximum included): the metric. */
  refused?: (limit: SignerLimitName) => void;
}

/**
 * A signature as the wallet's ceilings count it (its address and amount, and which ceilings it counts in: a payment's
 * or permit's when `kind` is absent, ../limits/wallet-limiter.ts), and the key it is made with.
 */
type Taken = { address: string; amount: bigint; walletKeyRef: string; kind?: SignatureKind };

/** A payment as the policy store counts it: its wallet (and the wallet's account key), amount and payee. */
interface Payment extends Taken {
  accountKeyRef: string;
  payee: string;
}

/** What a digest is signed with and must recover to. */
interface DigestTarget {
  account_key_ref: string;
  wallet_key_ref: string;
  address: string;
  digest: Uint8Array;
}

export interface SignerServiceDeps {
  backend: KeyBackend;
  invariants: SignerInvariants;
  limits?: SignerServiceLimits;
  /** The wallets' owner-signed policies (./owner-policy/); without them only the signer's own limits apply. */
  ownerPolicies?: OwnerPolicies;
  /** Milliseconds since the epoch (tests move it). */
  clock?: () => number;
  /** Told of each payment signed while its spend committed: released after the commit, or discarded (the metric). */
  signedEarly?: (outcome: 'released' | 'discarded') => void;
}

export class SignerService {
  private readonly backend: KeyBackend;
  private readonly invariants: SignerInvariants;
  private readonly limits: SignerServiceLimits;
  private readonly owner: OwnerPolicies | undefined;
  private readonly clock: () => number;
  private readonly signedEarly: SignerServiceDeps['signedEarly'];
  private readonly destructions: KeyDestructions;

  constructor(deps: SignerServiceDeps) {
    this.backend = deps.backend;
    this.invariants = deps.invariants;
    this.limits = deps.limits ?? {};
    this.owner = deps.ownerPolicies;
    this.clock = deps.clock ?? Date.now;
    this.signedEarly = deps.signedEarly;
    this.destructions = new KeyDestructions(deps.backend, deps.ownerPolicies);
  }

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }

  /** `context.alone`: whether the transport holds no other request (passed to the backend's signDigest). */
  async handle(request: SignerRequest, context: SignDigestOptions = {}): Promise<SignerResult<SignerMethod>> {
    switch (request.method) {
      case 'health': {
        const health = await this.backend.health();
        return { status: 'ok', backend: health.backend, protocol_version: 1 };
      }
      case 'create_account_key': {
        // The authority is verified before a key is made: a refused sign-in leaves nothing behind.
        const granted = this.owner && (await this.owner.accountAuthority(request.params.authority));
        const accountKeyRef = await this.backend.createAccountKey();
        if (this.owner && granted) await this.owner.recordAccount(accountKeyRef, granted.authority, granted.proof);
        return { account_key_ref: accountKeyRef, authority: granted?.authority ?? null };
      }
      case 'create_wallet_key': {
        const key = await this.backend.createWalletKey(request.params.account_key_ref, request.params.curve);
        const address = walletAddress(key);
        if (key.curve === 'secp256k1') rememberWalletKey(key.publicKey);
        // Recorded under its account's authority, EVM and Solana alike (base58 kept as it is); an account the store
        // has none for (made before it kept them) leaves it to the approver, never to whoever signs first.
        const authority = this.owner ? await this.owner.recordWallet(address, request.params.account_key_ref) : null;
        return walletKeyResult(key, address, authority);
      }
      case 'set_wallet_policy':
        // A wallet the store has no record of proves its key held by a probe (never returned, counted nowhere).
        return this.ownerPolicies().set(request.params, this.now(), (key) =>
          proveWalletKey(this.backend, key, context),
        );
      case 'get_wallet_policy':
        return this.ownerPolicies().get(request.params.address);
      case 'attest_wallet_policy': // ./owner-policy/policy-receipts.ts, ./solana/policy-receipt-message.ts
        return attestWalletPolicy(request.params, this.ownerPolicies(), this.now(), {
          digest: (r) => this.signTaken(r, undefined, this.digestSigning(r, context)),
          ed25519: (r) => this.signTaken(r, undefined, receiptMessageSigning(this.backend, r)),
        });
      case 'sign_transfer_authorization': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.from, 'message.from');
        aaddress(message.to, 'message.to');
        this.counted(() => assertTransferInvariants(this.invariants, address, domain, message, this.now()));
        const digest = transferAuthorizationDigest(domain, message);
        const target = { account_key_ref, wallet_key_ref, address, digest };
        const amount = BigInt(message.value);
        const payment = { accountKeyRef: account_key_ref, walletKeyRef: wallet_key_ref, address, amount };
        return this.signPayment({ ...payment, payee: message.to }, this.digestSigning(target, context), context);
      }
      case 'sign_permit2_witness_transfer': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.permitted.token, 'message.permitted.token');
        aaddress(message.spender, 'message.spender');
        aaddress(message.witness.to, 'message.witness.to');
        aaddress(message.witness.facilitator, 'message.witness.facilitator');
        this.counted(() => assertPermit2Invariants(this.invariants, domain, message, this.now()));
        const digest = permit2WitnessTransferDigest(domain, message);
        // The proxy may move up to the signed maximum: that is what counts against the policy and the ceilings.
        const amount = BigInt(message.permitted.amount);
        const target = { account_key_ref, wallet_key_ref, address, digest };
        const payment = { accountKeyRef: account_key_ref, walletKeyRef: wallet_key_ref, address, amount };
        const sign = this.digestSigning(target, context);
        return this.signPayment({ ...payment, payee: message.witness.to }, sign, context);
      }
      case 'sign_eip2612_permit': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.owner, 'message.owner');
        aaddress(message.spender, 'message.spender');
        this.counted(() => assertEip2612PermitInvariants(this.invariants, address, domain, message, this.now()));
        const digest = eip2612PermitDigest(domain, message);
        // The permit only lets Permit2 move tokens; each Permit2 transfer is signed (and counted) on its own.
        // It counts as one signature in the wallet's rate ceilings, with no amount, and is no payment to the policy.
        const target = { account_key_ref, wallet_key_ref, address, digest };
        const taken = { address, amount: 0n, walletKeyRef: wallet_key_ref };
        return this.signTaken(taken, undefined, this.digestSigning(target, context));
      }
      case 'sign_solana_transaction':
        return this.signSolanaTransaction(request.params);
      case 'destroy_wallet_key':
        return this.destructions.destroy(request.params, context);
    }
  }

  /**
   * A Solana wallet pays an x402 `exact` transfer: the message is decoded and must be exactly that shape
   * (./solana/check-x402-exact-message.ts), its amount passes the per-signature maximum, the wallet's owner-signed
   * policy (payee: `pay_to`, the owner of the destination the message was checked against; required when the
   * signer keeps a policy store) and its rolling ceilings (keyed by the base58 address), as an EVM payment's; the
   * backend signs the message bytes with Ed25519, and the signature must verify under the wallet's public key
   * before it is returned.
   */
  private async signSolanaTransaction(params: SignSolanaTransactionParams) {
    const { publicKey, message, transfer } = await checkSolanaPaymentRequest(
      params,
      this.invariants.solana,
      !!this.owner,
    );
    this.counted(() => assertValue(this.invariants, String(transfer.amount)));
    const { account_key_ref, wallet_key_ref } = params;
    const sign = async () => {
      const signature = await signEd25519OfAccount(this.backend, account_key_ref, wallet_key_ref, message).catch(
        (err: unknown) => Promise.reject(asWalletKeyOfAccount(err)),
      );
      assertEd25519Signature(signature, message, publicKey);
      return { signature: base58.encode(signature), message_hash: bytesToHex(sha256(message)) };
    };
    // Without a store nothing reads the payee; with one, `pay_to` is there (required above).
    const payee = params.pay_to ?? params.address;
    const payment = { accountKeyRef: account_key_ref, walletKeyRef: wallet_key_ref, address: params.address };
    return this.signPayment({ ...payment, amount: transfer.amount, payee }, sign);
  }

  /** Runs the static checks; a refusal by the per-signature maximum is counted under its limit's name. */
  private counted(check: () => void): void {
    try {
      check();
    } catch (err) {
      if (err instanceof SignerFault && err.details?.limit) this.limits.refused?.(err.details.limit);
      throw err;
    }
  }

  /** Checks the wallet's ceilings and records this signature in them, at once (synchronous: nothing can interleave). */
  private take(address: string, amount: bigint, kind: SignatureKind = 'signature'): LimitReceipt | undefined {
    const outcome = this.limits.wallets?.take(address, amount, kind);
    if (!outcome || outcome.ok) return outcome?.receipt;
    const r = outcome.refusal;
    this.limits.refused?.(r.limit);
    throw new SignerFault(
      'limit_exceeded',
      `${r.limit}: the wallet's ${r.limit} ceiling of ${r.max} would be exceeded; ${r.headroom} left, retry after ${r.retryAfterSeconds} s`,
      {
        limit: r.limit,
        max: String(r.max),
        headroom: String(r.headroom),
        window_seconds: r.windowSeconds,
        retry_after_seconds: r.retryAfterSeconds,
      },
    );
  }

  /** `target`'s digest signed (the backend called at once; the key tied to its account first) and finalised. */
  private digestSigning(target: DigestTarget, context: SignDigestOptions) {
    const { account_key_ref: account, wallet_key_ref: wallet, digest } = target;
    return async () =>
      signatureResult(target, await signDigestOfAccount(this.backend, account, wallet, digest, context));
  }

  /**
   * A payment of `amount` from `address` to `payee`: the owner-signed policy's check and spend record
   * (./owner-policy/), then `sign`. Signed after the spend committed; or, when the store foresees the spend allowed
   * (./owner-policy/spend-foresight.ts) and the wallet's ceilings have room, while it commits (`signWhileCommitting`).
   */
  private async signPayment<R>(payment: Payment, sign: () => Promise<R>, context: SignDigestOptions = {}): Promise<R> {
    const { address, amount } = payment;
    const owner = this.owner;
    if (!owner) return this.signTaken(payment, undefined, sign);
    const reservation = owner.reserve(address, amount, payment.payee, new Date(this.clock()));
    if (reservation.foreseen) {
      const taken = this.limits.wallets?.take(address, amount);
      if (!taken || taken.ok) {
        const signing = signAfterCommitStarts(reservation, sign, context);
        return this.signWhileCommitting(reservation, taken?.receipt, payment.walletKeyRef, signing);
      }
      // The ceilings refuse: decided in the usual order (the policy's refusal first), and counted there.
    }
    const spend = await reservation.spend;
    // No spend recorded for an amount: a wallet the store has no record of (made before the signer kept them). The
    // signature just proved the key is the account's and the address its key's: recorded now under the account's
    // authority (the approver, if the store has none for the account), so that its policy can only be signed by that
    // authority (never bound to whoever signs first).
    const adopt =
      spend === undefined && amount > 0n ? () => owner.adoptWallet(address, payment.accountKeyRef) : undefined;
    return this.signTaken(payment, spend, sign, adopt);
  }

  /**
   * Lets `signing` (asked for with the wallet's ceilings already taken: `receipt`) out only once the reservation's
   * spend committed in the signer's store. A refusal or a store failure discards it and gives the ceilings back; a
   * signature that fails, or whose key's destroy started meanwhile, gives back both, as in `signTaken`.
   */
  private async signWhileCommitting<R>(
    reservation: PaymentReservation,
    receipt: LimitReceipt | undefined,
    walletKeyRef: string,
    signing: Promise<R>,
  ): Promise<R> {
    // Settled whatever happens to the spend: a signature that fails while the spend commits is no unhandled rejection.
    signing.catch(() => undefined);
    let id: string | undefined;
    try {
      id = await reservation.spend;
    } catch (err) {
      if (receipt) this.limits.wallets?.giveBack(receipt);
      signing.then(
        () => this.signedEarly?.('discarded'),
        () => undefined,
      );
      throw err;
    }
    let result: R;
    try {
      result = await signing;
    } catch (err) {
      await this.giveBack(receipt, id);
      throw err;
    }
    try {
      this.destructions.assertLive(walletKeyRef);
    } catch (err) {
      this.signedEarly?.('discarded');
      await this.giveBack(receipt, id);
      throw err;
    }
    this.signedEarly?.('released');
    return result;
  }

  /** What a signature that does not leave returns: the wallet's ceilings, and its spend in the policy store. */
  private async giveBack(receipt: LimitReceipt | undefined, spend: string | undefined): Promise<void> {
    if (receipt) this.limits.wallets?.giveBack(receipt);
    await this.owner?.giveBack(spend).catch(() => undefined);
  }

  private ownerPolicies(): OwnerPolicies {
    if (!this.owner) {
      throw new SignerFault(
        'policy_store_unavailable',
        'this signer keeps no policy store (TREASURY_SIGNER_DATABASE_URL is not set): owner-signed policies are off',
        { rule: 'no_policy_store' },
      );
    }
    return this.owner;
  }

  /**
   * Takes the wallet's ceilings and calls `sign` with no await between them (the backend is asked at once); `sign`
   * signs what this class computed itself and checks it is the wallet's; then `settle`, if any. The signature leaves
   * only if its key's destroy has not started meanwhile. A signature that does not leave gives back its ceilings and
   * its recorded spend (`spend`, committed in the policy store before this ran).
   */
  private async signTaken<R>(
    taken: Taken,
    spend: string | undefined,
    sign: () => Promise<R>,
    settle?: () => Promise<void>,
  ): Promise<R> {
    let receipt: LimitReceipt | undefined;
    try {
      receipt = this.take(taken.address, taken.amount, taken.kind);
      const result = await sign();
      if (settle) await settle();
      this.destructions.assertLive(taken.walletKeyRef);
      return result;
    } catch (err) {
      await this.giveBack(receipt, spend);
      throw err;
    }
  }
}

/** The protocol's result for a raw signature of `target`'s digest, finalised (low-S, yParity, recovers to the wallet). */
function signatureResult(target: DigestTarget, raw: Uint8Array) {
  const sig = finalizeSignature(target.digest, raw, target.address);
  return { signature: sig.signature, r: sig.r, s: sig.s, v: sig.v, digest: bytesToHex(target.digest) };
}
