/**
 * One single-part signature (CKM_ECDSA over a digest, CKM_EDDSA over a message) on an exclusive pooled session
 * (./session-pool.ts): C_SignInit and C_Sign as one unit, C_Sign on the calling thread when `inline()` says so,
 * else on a libuv thread (C_SignAsync); 64 bytes.
 *
 * Protects against: a key destroyed while its signature waited for a session. `destroyed()` (the wallet's
 * tombstone, ./tombstone-store.ts) is asked in the tick of C_SignInit — nothing yields between the two, so a
 * destroy cannot slip in: no signature starts, and the session goes back to the pool clean — and again once the
 * HSM has answered, so a signature made while the key was being destroyed is discarded: `key_destroyed` either
 * way. A handle of a destroyed Ed25519 token object (which the HSM may give to a new object) never reaches
 * C_SignInit.
 * Known limits: a C_Sign already running when the key is destroyed runs to its end inside the HSM; only its
 * result is dropped. A signature returned before the tombstone was written is the caller's to use.
 */
import type pkcs11js from 'pkcs11js';
import { SignerFault } from '../../signer-error.js';
import { toSignerFault } from './ckr-error-map.js';
import type { SessionPool } from './session-pool.js';

export interface SignOnPoolObserver {
  hsmOperation?(op: string, seconds: number): void;
  /** A signature was made on the main thread (`inline`) or on a libuv thread (`pool`). */
  signed?(thread: 'inline' | 'pool'): void;
}

export interface SignOnPoolRequest {
  mechanism: number;
  key: pkcs11js.Handle;
  input: Uint8Array;
  /** Asked right before C_Sign: sign on this thread. */
  inline: () => boolean;
  /** Whether the key has been destroyed (its tombstone written) by now. */
  destroyed: () => boolean;
}

export async function signOnPool(
  pool: SessionPool,
  p11: pkcs11js.PKCS11,
  observer: SignOnPoolObserver,
  { mechanism, key, input, inline, destroyed }: SignOnPoolRequest,
): Promise<Uint8Array> {
  const signature = await pool.with(async (session): Promise<Uint8Array | undefined> => {
    if (destroyed()) return undefined;
    const started = process.hrtime.bigint();
    try {
      // Init and the operation are one unit: if C_Sign fails, the pool closes this session, which
      // also ends the active operation (a session is never handed out with an operation pending).
      p11.C_SignInit(session, { mechanism }, key);
      const data = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
      const here = inline();
      const signature = here
        ? p11.C_Sign(session, data, Buffer.alloc(64))
        : await p11.C_SignAsync(session, data, Buffer.alloc(64));
      observer.signed?.(here ? 'inline' : 'pool');
      if (signature.length !== 64)
        throw new SignerFault('hsm_error', `unexpected signature length ${signature.length}`);
      return new Uint8Array(signature);
    } catch (err) {
      throw toSignerFault(err, 'sign');
    } finally {
      observer.hsmOperation?.('sign', Number(process.hrtime.bigint() - started) / 1e9);
    }
  });
  if (signature === undefined || destroyed())
    throw new SignerFault('key_destroyed', 'wallet_key_ref names a key destroyed while this signature waited');
  return signature;
}
