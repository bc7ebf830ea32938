/**
 * Raw backend signing throughput, in-process and without the socket: how many `signDigest` calls per
 * second a KeyBackend sustains with N in flight, optionally including the signer's ECDSA finalisation
 * (low-S + recovery + address check). For bench/ to print next to end-to-end figures.
 *
 * Protects against: nothing; a measurement helper. It signs random digests with a throwaway wallet key
 * it creates itself on the given backend (left as an orphan wrapped blob: nothing stores it).
 * Known limits: measures a warm cache (one wallet key); misses cost ≈4× (measured on SoftHSM 2.6.1).
 */
import { randomBytes } from 'node:crypto';
import type { KeyBackend } from '../backends/key-backend.js';
import { finalizeSignature } from '../ecdsa/finalize-signature.js';
import { publicKeyToAddress } from '../ecdsa/public-key-to-address.js';

export interface MeasureBackendSignRateParameters {
  backend: KeyBackend;
  /** How long to sign for (default 2,000 ms). */
  durationMs?: number;
  /** Signatures in flight at once (default 4: both SoftHSM cores are used only from 4 on). */
  concurrency?: number;
  /** Also run low-S + yParity recovery + address check per signature (default false). */
  finalize?: boolean;
}

export interface MeasureBackendSignRateReturnType {
  signatures: number;
  seconds: number;
  perSecond: number;
}

export async function measureBackendSignRate(
  params: MeasureBackendSignRateParameters,
): Promise<MeasureBackendSignRateReturnType> {
  const { backend, durationMs = 2000, concurrency = 4, finalize = false } = params;
  const account = await backend.createAccountKey();
  const wallet = await backend.createWalletKey(account);
  const address = publicKeyToAddress(wallet.publicKey);
  const digests = Array.from({ length: 256 }, () => new Uint8Array(randomBytes(32)));
  await backend.signDigest(account, wallet.walletKeyRef, digests[0]!); // warm the handle cache
  let signatures = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const digest = digests[signatures % digests.length]!;
        const raw = await backend.signDigest(account, wallet.walletKeyRef, digest);
        if (finalize) finalizeSignature(digest, raw, address);
        signatures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { signatures, seconds, perSecond: signatures / seconds };
}
