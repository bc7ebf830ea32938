/**
 * Which wallets the signer keeps policy state for: only those whose key it holds. Before `set_wallet_policy` writes
 * anything, the wallet must be one of them, shown by the cheapest evidence there is:
 *   1. this process knows it — it made the key (`create_wallet_key`), or a payment signature of the key recovered to
 *      the address (the wallet's adoption), or an earlier check below passed (a bounded LRU of addresses: public
 *      data, never key material);
 *   2. the store recorded it under its account (`underAccount`: made by `create_wallet_key` of a signer with this
 *      store, or adopted at a payment) — one indexed read;
 *   3. the front named the wallet's key references (`wallet_key`) and the key signed a probe the signer chose as that
 *      address's key (../key-destruction/prove-wallet-key.ts; the probe's signature is dropped) — one HSM/KMS
 *      signature, once per address and process.
 * Otherwise `key_not_found`, rule `unknown_wallet`, and nothing is written.
 *
 * Defends: a front that lies or was taken over growing the signer's store without limit — one wallet row and policy
 * history per made-up address, each bound to a key of its choosing as `first_signer` — and filling its audit with
 * them; a row bound that way before (no account on it) taking further documents unless its key proves held.
 * Does not defend: a key the backend cannot find by address alone — a PKCS#11 secp256k1 wallet key exists only as
 * the blob its account key wrapped, which the front keeps, and a KMS key is named by its account and key id (no
 * lookup by address); so a wallet the store has no record of (made before it kept them) needs its references (3.)
 * once per process. A probe of the wrong key for a made-up address costs one signature each time (as
 * `destroy_wallet_key`'s does). Memory is per process: another signer on the same store learns by (2.) or (3.).
 */
import { LRUCache } from 'lru-cache';
import { counterpartyKey } from '../../policy/counterparty-address.js';
import type { WalletKeyRefs } from '../protocol/owner-policy-protocol.js';
import { SignerFault } from '../signer-error.js';

/** Addresses remembered per process: about 100 bytes each, so a few megabytes at most. */
const MAX_REMEMBERED = 50_000;

/** The key check of ../key-destruction/prove-wallet-key.ts, bound to the backend by the signer service. */
export type ProveWalletKey = (key: WalletKeyRefs & { address: string }) => Promise<'proved' | 'destroyed'>;

/** How to show that a wallet with no remembered key is held: its store record (2.), its key's proof (3.). */
export interface HeldEvidence {
  /** Whether the store recorded the wallet under its account (a store failure rejects: fail closed). */
  recordedUnderAccount: () => Promise<boolean>;
  /** The front's references of the wallet's key, if it named them. */
  key: WalletKeyRefs | undefined;
  /** Unset: no backend to ask (nothing can be proved). */
  prove: ProveWalletKey | undefined;
}

export class HeldWalletKeys {
  private readonly known = new LRUCache<string, true>({ max: MAX_REMEMBERED });

  /** The wallet's key is this signer's: made here, or a signature of it recovered to `address`. */
  remember(address: string): void {
    this.known.set(counterpartyKey(address), true);
  }

  /** Resolves once `address`'s key is shown held (then remembered); throws the refusal otherwise. */
  async assertHeld(address: string, evidence: HeldEvidence): Promise<void> {
    if (this.known.has(counterpartyKey(address))) return;
    if (!(await evidence.recordedUnderAccount())) await this.proveHeld(address, evidence);
    this.remember(address);
  }

  private async proveHeld(address: string, { key, prove }: HeldEvidence): Promise<void> {
    if (key === undefined || prove === undefined) {
      throw new SignerFault(
        'key_not_found',
        'the signer holds no key it knows of for this wallet address, so it keeps no policy for it ' +
          '(a wallet made before the signer kept records names its key references in wallet_key)',
        { rule: 'unknown_wallet' },
      );
    }
    let proved: 'proved' | 'destroyed';
    try {
      proved = await prove({ ...key, address });
    } catch (err) {
      if (err instanceof SignerFault && err.code === 'address_mismatch') {
        throw new SignerFault(
          'address_mismatch',
          'wallet_key is not the key of the wallet address named: no policy was kept',
          { rule: 'key_of_address' },
          { cause: err },
        );
      }
      throw err;
    }
    if (proved === 'destroyed')
      throw new SignerFault('key_destroyed', "the wallet's key is destroyed: no policy is kept for it");
  }
}
