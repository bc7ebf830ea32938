/**
 * `destroy_wallet_key` in the signer service, and the check that keeps a destroyed key's signatures in.
 *
 * With a policy store, a key is destroyed only once (1) the front named the wallet's address (`invariant_violation`,
 * rule `address_required`, otherwise), (2) the key proved to be that address's by signing a probe the signer chose
 * (./prove-wallet-key.ts) — a key already destroyed answers `{ destroyed: true }` there, as a second destroy always
 * did — and (3) the wallet's owner-signed policy, if it has one, carries `allow_key_destruction: true`
 * (`key_destruction_not_allowed` otherwise: ../owner-policy/owner-policies.ts). Without a store, as before: the
 * backend destroys what the references name, and `address` is not read.
 *
 * Once destroy_wallet_key has answered, no signature of the key leaves the signer. The backend keeps no signature
 * from starting or returning after its tombstone (../backends/key-backend.ts), but one it returned before is the
 * caller's: a payment's signature may wait for its spend to commit, or for the wallet's adoption by the store. So the
 * service asks `assertLive` right before each signature is returned — synchronously, after every await of its path:
 * `key_destroyed` while a destroy of that key is under way here (marked just before the backend is asked, by the
 * backend's `walletKeyId`, which names a key however its reference is spelled) or once the backend holds its
 * tombstone. A signature that passed the check reaches the server's write in microtasks only; the destroy answers
 * one macrotask after its key was marked or found tombstoned, so every such signature was handed to its socket
 * before, and the server flushes the connections' corked replies before it writes a destroy's answer
 * (../server/signer-server.ts). A destroy refused before the backend was asked leaves nothing marked; one the
 * backend failed is unmarked (its tombstone, if written, keeps refusing).
 *
 * Does not defend: wallets without a signed policy (the front may still destroy their key, as before); a signed
 * policy with `allow_key_destruction: true` lets whoever holds the API destroy the key until the owner signs a newer
 * version without it; a policy signed while a destroy is between its policy read and the backend's tombstone (that
 * destroy goes on); another signer process on the same keys learns of a tombstone only as its backend does.
 */
import type { KeyBackend, SignDigestOptions } from '../backends/key-backend.js';
import type { OwnerPolicies } from '../owner-policy/owner-policies.js';
import type { DestroyWalletKeyResult, SignerParams } from '../protocol/signer-protocol.js';
import { SignerFault } from '../signer-error.js';
import { proveWalletKey } from './prove-wallet-key.js';

/** Resolves in a later macrotask: every microtask queued before has run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class KeyDestructions {
  /** Wallet keys (by the backend's `walletKeyId`) whose destroy the backend is running, with how many at once. */
  private readonly destroying = new Map<string, number>();

  constructor(
    private readonly backend: KeyBackend,
    private readonly owner: OwnerPolicies | undefined,
  ) {}

  async destroy(
    params: SignerParams<'destroy_wallet_key'>,
    context: SignDigestOptions = {},
  ): Promise<DestroyWalletKeyResult> {
    const { account_key_ref, wallet_key_ref, address } = params;
    if (this.owner) {
      if (address === undefined) {
        throw new SignerFault('invariant_violation', "address is required: the wallet's owner-signed policy decides", {
          rule: 'address_required',
        });
      }
      const key = { account_key_ref, wallet_key_ref, address };
      if ((await proveWalletKey(this.backend, key, context)) === 'destroyed') return this.answer();
      await this.owner.assertKeyDestructionAllowed(address);
    }
    const unmark = this.mark(wallet_key_ref);
    try {
      await this.backend.destroyWalletKey(account_key_ref, wallet_key_ref);
    } finally {
      unmark();
    }
    return this.answer();
  }

  /**
   * Throws `key_destroyed` when a destroy of the key is under way in this process or has finished (the backend's
   * tombstone). Synchronous: called right before a signature is returned, after every await of its path.
   */
  assertLive(walletKeyRef: string): void {
    const underWay = this.destroying.size > 0 && this.destroying.has(this.idOf(walletKeyRef));
    if (underWay || this.backend.isDestroyed(walletKeyRef))
      throw new SignerFault('key_destroyed', 'wallet_key_ref names a key destroyed while this signature was made');
  }

  /** Marks the key as being destroyed; returns what unmarks it (call once the backend settled). */
  private mark(walletKeyRef: string): () => void {
    const id = this.idOf(walletKeyRef);
    this.destroying.set(id, (this.destroying.get(id) ?? 0) + 1);
    return () => {
      const left = (this.destroying.get(id) ?? 1) - 1;
      if (left > 0) this.destroying.set(id, left);
      else this.destroying.delete(id);
    };
  }

  /** The backend's identity of the key; a reference the backend cannot read (it will refuse it) stands for itself. */
  private idOf(walletKeyRef: string): string {
    return this.backend.walletKeyId(walletKeyRef) ?? `ref:${walletKeyRef}`;
  }

  /**
   * `{ destroyed: true }`, one macrotask after the key was marked or found tombstoned: a signature that passed
   * `assertLive` before has been handed to its socket by then (it needs microtasks only to get there).
   */
  private async answer(): Promise<DestroyWalletKeyResult> {
    await nextTurn();
    return { destroyed: true };
  }
}
