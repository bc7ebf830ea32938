/**
 * What each protocol method does, independent of transport: validate the static invariants, compute the
 * EIP-712 digest from structured data, sign through the backend, and finalise (low-S, recovery id, verify
 * against the wallet address) before anything is returned.
 *
 * Defends: every result is built from the protocol's result fields only — no method returns key material.
 * Does not defend: who asked (socket permissions) or spend policy (the front).
 */
import { hexToBytes } from 'viem';
import { assertTransferInvariants } from './assert.js';
import type { SignerInvariants } from './config/signer-config.js';
import type { KeyBackend } from './backends/key-backend.js';
import { finalizeSignature, publicKeyToAddress } from './ecdsa/finalize-signature.js';
import { hashTransferAuthorization } from './eip3009/hash-transfer-authorization.js';
import type { SignerRequest, SignerResult, SignerMethod } from './protocol/signer-protocol.js';
import { bytesToHex } from 'viem';

export class SignerService {
  constructor(
    private readonly backend: KeyBackend,
    private readonly invariants: SignerInvariants,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async handle(request: SignerRequest): Promise<SignerResult<SignerMethod>> {
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
        assertTransferInvariants(this.invariants, address, domain, message, this.now());
        const digest = hashTransferAuthorization(domain, message);
        const digestBytes = hexToBytes(digest);
        const raw = await this.backend.signDigest(account_key_ref, wallet_key_ref, digestBytes);
        const sig = finalizeSignature(digestBytes, raw, address);
        return { signature: sig.signature, r: sig.r, s: sig.s, v: sig.v, digest };
      }
      case 'destroy_wallet_key':
        await this.backend.destroyWalletKey(request.params.account_key_ref, request.params.wallet_key_ref);
        return { destroyed: true };
    }
  }
}
