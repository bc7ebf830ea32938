/**
 * What each protocol method does, independent of transport: re-check the static invariants, compute the
 * EIP-712 digest from the structured authorization (EIP-3009 or Permit2 with the x402 upto witness), sign through the backend, finalise (low-S, yParity,
 * recovered address = wallet address) — and only then return.
 *
 * Protects against: returning anything but the protocol's result fields (results are built field by
 * field, never spread from backend objects), and signing anything the signer did not hash itself.
 * Known limits: who asked (socket permissions) and spend policy (the front, under its advisory lock).
 */
import { bytesToHex } from 'viem';
import { aaddress, assertPermit2Invariants, assertTransferInvariants } from './assert.js';
import type { KeyBackend, SignDigestOptions } from './backends/key-backend.js';
import type { SignerInvariants } from './config/signer-config.js';
import { finalizeSignature } from './ecdsa/finalize-signature.js';
import { publicKeyToAddress } from './ecdsa/public-key-to-address.js';
import { transferAuthorizationDigest } from './eip3009/hash-transfer-authorization.js';
import { permit2WitnessTransferDigest } from './permit2/hash-permit2-witness-transfer.js';
import type { SignerMethod, SignerRequest, SignerResult } from './protocol/signer-protocol.js';

export class SignerService {
  constructor(
    private readonly backend: KeyBackend,
    private readonly invariants: SignerInvariants,
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
        return { wallet_key_ref: key.walletKeyRef, public_key: bytesToHex(key.publicKey), address: publicKeyToAddress(key.publicKey) };
      }
      case 'sign_transfer_authorization': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.from, 'message.from');
        aaddress(message.to, 'message.to');
        assertTransferInvariants(this.invariants, address, domain, message, this.now());
        return this.signDigest(account_key_ref, wallet_key_ref, address, transferAuthorizationDigest(domain, message), context);
      }
      case 'sign_permit2_witness_transfer': {
        const { account_key_ref, wallet_key_ref, address, domain, message } = request.params;
        aaddress(address, 'address');
        aaddress(domain.verifyingContract, 'domain.verifyingContract');
        aaddress(message.permitted.token, 'message.permitted.token');
        aaddress(message.spender, 'message.spender');
        aaddress(message.witness.to, 'message.witness.to');
        aaddress(message.witness.facilitator, 'message.witness.facilitator');
        assertPermit2Invariants(this.invariants, domain, message, this.now());
        return this.signDigest(account_key_ref, wallet_key_ref, address, permit2WitnessTransferDigest(domain, message), context);
      }
      case 'destroy_wallet_key':
        await this.backend.destroyWalletKey(request.params.account_key_ref, request.params.wallet_key_ref);
        return { destroyed: true };
    }
  }

  /** Signs a digest this class computed itself; the result must recover to the wallet's address. */
  private async signDigest(accountKeyRef: string, walletKeyRef: string, address: string, digest: Uint8Array, context: SignDigestOptions) {
    const raw = await this.backend.signDigest(accountKeyRef, walletKeyRef, digest, context);
    const sig = finalizeSignature(digest, raw, address);
    return { signature: sig.signature, r: sig.r, s: sig.s, v: sig.v, digest: bytesToHex(digest) };
  }
}
