/**
 * How close the signer, asked through its socket, can come to the raw HSM rate on this machine — from what every
 * EIP-3009 signature must cost besides the HSM's own work, measured in the bench's process in the same run:
 * - the raw ceiling's CPU per signature (the bench process while it drove the backend: SoftHSM's C_SignInit and
 *   C_Sign, and the backend's hand-off to its libuv thread);
 * - the signer's required work per signature: the EIP-712 digest it computes itself from the structured
 *   authorization, and the finalisation (low-S, yParity by recovery, the check that the signature recovers to the
 *   wallet) — over real signatures of the backend, so that both recovery ids occur as they do in service.
 *
 * Why: when the HSM shares the machine's cores with the signer (SoftHSM), the signer's rate is at most
 * cores ÷ (raw + required) a second, so its ratio to the raw rate is at most raw ÷ (raw + required); everything
 * else the signer and its client spend — the socket, the frames, validation, the event loops — lowers it further.
 * The bound names how much of the gap is the checks no signer of ours may skip, and how much is the rest.
 * The required work is timed as the best of several passes (a lower bound on its cost), so the bound errs high.
 */
import type { KeyBackend } from '../../signer/backends/key-backend.js';
import { finalizeSignature, rememberWalletKey } from '../../signer/ecdsa/finalize-signature.js';
import { transferAuthorizationDigest } from '../../signer/eip3009/hash-transfer-authorization.js';
import { walletAddress } from '../../signer/wallet-key-result.js';

export interface SignerRatioBound {
  /** The bench process's CPU per raw signature, µs. */
  rawMicros: number;
  /** The digest from the structured authorization, µs a signature. */
  digestMicros: number;
  /** Low-S, yParity and the recovery check, µs a signature. */
  finalizeMicros: number;
  /** raw ÷ (raw + digest + finalise): the highest ratio to raw a signer doing this work can reach here. */
  bound: number;
}

/** The HSM's raw CPU and the signer's required work, µs a signature: the least a signature costs this machine. */
export function signatureMicros(b: SignerRatioBound): number {
  return b.rawMicros + b.digestMicros + b.finalizeMicros;
}

/** CPU µs of `fn` per call over `calls` calls, the best of `passes` passes. */
function bestMicrosPerCall(passes: number, calls: number, fn: (i: number) => void): number {
  let best = Infinity;
  for (let p = 0; p < passes; p++) {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) fn(i);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / calls);
  }
  return best;
}

/**
 * Signs `samples` authorizations of a fresh wallet of `accountKeyRef` with `backend` (not timed), then times the
 * signer's required work on them. `rawMicros`: the raw ceiling's CPU per signature, measured by the caller.
 */
export async function measureSignerRatioBound(
  backend: KeyBackend,
  accountKeyRef: string,
  rawMicros: number,
  token: `0x${string}`,
  payTo: `0x${string}`,
  samples = 64,
): Promise<SignerRatioBound> {
  const key = await backend.createWalletKey(accountKeyRef);
  const address = walletAddress(key);
  rememberWalletKey(key.publicKey);
  const domain = { name: 'USDC', version: '2', chainId: 84532, verifyingContract: token };
  const messages = Array.from({ length: samples }, (_, i) => ({
    from: address as `0x${string}`,
    to: payTo,
    value: '1000',
    validAfter: '0',
    validBefore: '4102444800',
    nonce: `0x${i.toString(16).padStart(64, '0')}` as `0x${string}`,
  }));
  const digests = messages.map((m) => transferAuthorizationDigest(domain, m));
  const raws: Uint8Array[] = [];
  for (const digest of digests) raws.push(await backend.signDigest(accountKeyRef, key.walletKeyRef, digest));
  // Every sample must finalise (a failure here would time an error path): checked once, outside the timing.
  digests.forEach((d, i) => finalizeSignature(d, raws[i]!, address));
  const rounds = 40;
  const digestMicros = bestMicrosPerCall(5, samples * rounds, (i) => {
    transferAuthorizationDigest(domain, messages[i % samples]!);
  });
  const finalizeMicros = bestMicrosPerCall(5, samples * rounds, (i) => {
    finalizeSignature(digests[i % samples]!, raws[i % samples]!, address);
  });
  return { rawMicros, digestMicros, finalizeMicros, bound: rawMicros / (rawMicros + digestMicros + finalizeMicros) };
}

/**
 * The bound as the benches print it; with `measured` (the signer's rate ÷ raw in the same run) and `signerMicros`
 * (the signer process's CPU a signature), beside what the signer measured.
 */
export function signerRatioBoundLine(b: SignerRatioBound, measured?: number, signerMicros?: number): string {
  const required = b.digestMicros + b.finalizeMicros;
  const bound =
    `the signer's ceiling beside the HSM's (./support/signer-ratio-bound.ts): raw ${b.rawMicros.toFixed(0)} µs of CPU a ` +
    `signature; the signer's required work ${required.toFixed(0)} µs (digest ${b.digestMicros.toFixed(1)}, ` +
    `low-S, yParity and recovery check ${b.finalizeMicros.toFixed(1)}), so at most ${b.bound.toFixed(2)}× raw with ` +
    `nothing else`;
  if (measured === undefined || signerMicros === undefined) return bound;
  const rest = signerMicros - b.rawMicros - required;
  return (
    `${bound}; measured ${measured.toFixed(2)}× (the signer process ${signerMicros.toFixed(0)} µs a signature, ` +
    `${rest.toFixed(0)} µs of it neither the HSM's nor required: socket, frames, validation, event loop; its ` +
    `client's CPU comes on top)`
  );
}
