/**
 * The native libsecp256k1 binding (`secp256k1` npm, prebuilt N-API), loaded once, or undefined when it does
 * not load on this platform (callers then use @noble/curves). Only the bindings entry is loaded: the
 * package's index silently falls back to a slow elliptic build.
 *
 * Protects against: nothing by itself. Known limits: its ecdsaVerify accepts only low-S signatures.
 */
import { createRequire } from 'node:module';

export interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaVerify(sig: Uint8Array, msg32: Uint8Array, publicKey: Uint8Array): boolean;
}

function load(): NativeSecp256k1 | undefined {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings.js') as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

export const nativeSecp256k1: NativeSecp256k1 | undefined = load();
