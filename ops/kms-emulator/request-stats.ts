/**
 * What the KMS emulator counts, for tests and benchmarks to read: requests received per operation,
 * answered successfully per operation, errors per operation and `__type`, injected faults per mode,
 * requests refused before dispatch (bad signature, unknown operation), and every signature produced,
 * keyed by key and digest, so "no digest was signed twice" is a question a test can ask
 * (`timesSigned(digest)`, `digestsSignedMoreThanOnce()`).
 *
 * Counts live in memory and only grow until `reset()`. They hold digests (public data: they are what
 * the caller sent) and key ids, never key material.
 */

export type FaultMode = 'throttle' | 'fail' | 'deny' | 'stall' | 'drop' | 'rate_limit' | 'unreachable';

export interface KmsEmulatorStatsSnapshot {
  received: Record<string, number>;
  succeeded: Record<string, number>;
  errors: Record<string, Record<string, number>>;
  injected: Record<string, number>;
  refusedBeforeDispatch: Record<string, number>;
  signatures: number;
  distinctDigestsSigned: number;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

export class KmsRequestStats {
  private readonly receivedByOp = new Map<string, number>();
  private readonly succeededByOp = new Map<string, number>();
  private readonly errorsByOp = new Map<string, Map<string, number>>();
  private readonly injectedByMode = new Map<string, number>();
  private readonly refused = new Map<string, number>();
  /** `${keyId}:${digestHex}` → how many signatures were produced. */
  private readonly signed = new Map<string, number>();
  private signatureCount = 0;

  recordReceived(operation: string): void {
    bump(this.receivedByOp, operation);
  }

  recordSucceeded(operation: string): void {
    bump(this.succeededByOp, operation);
  }

  recordError(operation: string, code: string): void {
    let byCode = this.errorsByOp.get(operation);
    if (!byCode) this.errorsByOp.set(operation, (byCode = new Map()));
    bump(byCode, code);
  }

  recordInjected(mode: FaultMode): void {
    bump(this.injectedByMode, mode);
  }

  recordRefusedBeforeDispatch(code: string): void {
    bump(this.refused, code);
  }

  recordSignature(keyId: string, digest: Uint8Array): void {
    this.signatureCount += 1;
    bump(this.signed, `${keyId}:${hex(digest)}`);
  }

  /** Requests received for `operation` (each SDK attempt counts once, faulted ones included). */
  received(operation: string): number {
    return this.receivedByOp.get(operation) ?? 0;
  }

  succeeded(operation: string): number {
    return this.succeededByOp.get(operation) ?? 0;
  }

  errors(operation: string, code?: string): number {
    const byCode = this.errorsByOp.get(operation);
    if (!byCode) return 0;
    if (code !== undefined) return byCode.get(code) ?? 0;
    let total = 0;
    for (const n of byCode.values()) total += n;
    return total;
  }

  injected(mode: FaultMode): number {
    return this.injectedByMode.get(mode) ?? 0;
  }

  /** Signatures produced over `digest` (by any key, or by `keyId` when given). */
  timesSigned(digest: Uint8Array, keyId?: string): number {
    const digestHex = hex(digest);
    let total = 0;
    for (const [k, n] of this.signed) {
      const [kid, d] = k.split(':') as [string, string];
      if (d === digestHex && (keyId === undefined || kid === keyId)) total += n;
    }
    return total;
  }

  /** Every (key, digest) pair that was signed more than once, with its count. */
  digestsSignedMoreThanOnce(): Array<{ keyId: string; digest: string; times: number }> {
    const out: Array<{ keyId: string; digest: string; times: number }> = [];
    for (const [k, times] of this.signed) {
      if (times < 2) continue;
      const [keyId, digest] = k.split(':') as [string, string];
      out.push({ keyId, digest: `0x${digest}`, times });
    }
    return out;
  }

  snapshot(): KmsEmulatorStatsSnapshot {
    const errors: Record<string, Record<string, number>> = {};
    for (const [op, byCode] of this.errorsByOp) errors[op] = Object.fromEntries(byCode);
    return {
      received: Object.fromEntries(this.receivedByOp),
      succeeded: Object.fromEntries(this.succeededByOp),
      errors,
      injected: Object.fromEntries(this.injectedByMode),
      refusedBeforeDispatch: Object.fromEntries(this.refused),
      signatures: this.signatureCount,
      distinctDigestsSigned: this.signed.size,
    };
  }

  reset(): void {
    for (const map of [this.receivedByOp, this.succeededByOp, this.injectedByMode, this.refused, this.signed])
      map.clear();
    this.errorsByOp.clear();
    this.signatureCount = 0;
  }
}
