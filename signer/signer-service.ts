/**
 * What each protocol method does, independent of transport: re-check the static invariants, compute the
 * EIP-712 digest from the structured authorization (EIP-3009, Permit2 with the x402 upto witness, or an
 * EIP-2612 permit to Permit2), take
 * the signature out of the wallet's own rolling ceilings (./limits/wallet-limiter.ts), sign through the
 * backend, finalise (low-S, yParity, recovered address = wallet address) — and only then return.
 *
 * Protects against: returning anything but the protocol's result fields (results are built field by
 * field, never spread from backend objects), signing anything the signer did not hash itself, and a front
 * that asks for more than the signer's own limits allow: the per-signature maximum (`value_max`) and the
 * per-wallet ceilings are checked and recorded with no await between the check, the record and the call
 * to the HSM, so concurrent requests cannot overshoot; a signature that never leaves (the HSM failed, it
 * recovers to another address) is given back. An `upto` authorization counts its signed maximum.
 * Known limits: who asked (socket permissions) and spend policy (the front, under its advisory lock); the
 * ceilings' restart hole (see ./limits/wallet-limiter.ts).
 */
import { bytesToHex } from 'viem';
import {
  aaddress,
  assertEip2612PermitInvariants,
  assertPermit2Invariants,
  assertTransferInvariants,
} from './assert.js';
import type { KeyBackend, SignDigestOptions } from './backends/key-backend.js';
import type { SignerInvariants } from './config/signer-config.js';
import { finalizeSignature } from './ecdsa/finalize-signature.js';
import { publicKeyToAddress } from './ecdsa/public-key-to-address.js';
import { eip2612PermitDigest } from './eip2612/hash-eip2612-permit.js';
import { transferAuthorizationDigest } from './eip3009/hash-transfer-authorization.js';
import type { LimitReceipt, WalletLimiter } from './limits/wallet-limiter.js';
import { permit2WitnessTransferDigest } from './permit2/hash-permit2-witness-transfer.js';
import type { SignerLimitName, SignerMethod, SignerRequest, SignerResult } from './protocol/signer-protocol.js';
import { SignerFault } from './signer-error.js';

export interface SignerServiceLimits {
  /** The rolling ceilings per wallet; without it only the static invariants (`value_max` among them) apply. */
  wallets?: WalletLimiter;
  /** Told the limit's name on every refusal by a limit (the per-signature maximum included): the metric. */
  refused?: (limit: SignerLimitName) => void;
}

export class SignerService {
  constructor(
    private readonly backend: KeyBackend,
    private readonly invariants: SignerInvariants,
    private readonly limits: SignerServiceLimits = {},
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** `context.alone`: whether the transport holds no other request (passed to the backend's signDigest). */
  async handle(request: SignerRequest, context: SignDigestOptions = {}): Promise<SignerResult<SignerMethod>> {
    switch (request.method) {
      case 'health': {
        const health = await this.backend.health();
        return { status: 'ok', backend: health.backend, protocol_version: 1 };
      }
      case 'create_account_key':
        return { account_key_ref: await this.backend.createAccountKey() };
      case 'create_wallet_key': {
        const key = await this.backend.createWalletKey(request.params.account_key_ref);
        return {
          wallet_key_ref: key.walletKeyRef,
          public_key: bytesToHex(key.publicKey),
          address: publicKeyToAddress(key.publicKey),
        };
      }
      case 'sign_transfer_authorization': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.from, 'message.from');
        aaddress(message.to, 'message.to');
        this.counted(() => assertTransferInvariants(this.invariants, address, domain, message, this.now()));
        const digest = transferAuthorizationDigest(domain, message);
        return this.signDigest(
          account_key_ref,
          wallet_key_ref,
          address,
          digest,
          this.take(address, BigInt(message.value)),
          context,
        );
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
        // The proxy may move up to the signed maximum: that is what counts against the wallet's ceilings.
        return this.signDigest(
          account_key_ref,
          wallet_key_ref,
          address,
          digest,
          this.take(address, BigInt(message.permitted.amount)),
          context,
        );
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
        // It counts as one signature in the wallet's rate ceilings, with no amount.
        return this.signDigest(account_key_ref, wallet_key_ref, address, digest, this.take(address, 0n), context);
      }
      case 'destroy_wallet_key':
        await this.backend.destroyWalletKey(request.params.account_key_ref, request.params.wallet_key_ref);
        return { destroyed: true };
    }
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
  private take(address: string, amount: bigint): LimitReceipt | undefined {
    const outcome = this.limits.wallets?.take(address, amount);
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

  /**
   * Signs a digest this class computed itself; the result must recover to the wallet's address. The
   * ceilings were taken just before (no await since the check): a signature that does not leave is given back.
   */
  private async signDigest(
    accountKeyRef: string,
    walletKeyRef: string,
    address: string,
    digest: Uint8Array,
    receipt: LimitReceipt | undefined,
    context: SignDigestOptions,
  ) {
    try {
      const raw = await this.backend.signDigest(accountKeyRef, walletKeyRef, digest, context);
      const sig = finalizeSignature(digest, raw, address);
      return { signature: sig.signature, r: sig.r, s: sig.s, v: sig.v, digest: bytesToHex(digest) };
    } catch (err) {
      if (receipt) this.limits.wallets?.giveBack(receipt);
      throw err;
    }
  }
}
