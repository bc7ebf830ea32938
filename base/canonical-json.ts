/**
 * Deterministic JSON: object keys sorted recursively, no whitespace. What it defends: one value, one spelling,
 * so hashes over it are reproducible — the audit chain's rows (src/api/audit/) and the owner-signed policy
 * documents (policy/signed-policy.ts), which the API, the CLI, the dashboard and the signer each hash on their own.
 *
 * Nothing of the value is dropped or changed on the way: every own enumerable key is written, `__proto__`
 * included (the sorted copy defines that key rather than assigning it, which would set the copy's prototype
 * and lose the key), and a number JSON cannot spell (NaN, ±Infinity) is refused with a CanonicalJsonError
 * naming where it lies, not written as null. Every other value is spelled as it always was, so a hash computed
 * before over a value without either one is the same now (test/unit/base/canonical-json.test.ts).
 *
 * Known limits: `undefined` fields vanish and `Date`s become ISO strings (JSON.stringify's rules); other objects
 * are copied by their own enumerable keys (a class instance's `toJSON` is not called); keys come in a new
 * object's order — integer-like keys ("2", "10") first, in numeric order, then the others sorted by UTF-16
 * code unit — the order every hash so far was computed in.
 */
import { BaseError } from './base-error.js';

export interface CanonicalJsonErrorDetails {
  reason: 'non_finite_number';
  /** Where the number lies: keys and array indexes from the root (`[]`: the value itself). */
  path: ReadonlyArray<string | number>;
  /** The number as JavaScript prints it (`NaN`, `Infinity`, `-Infinity`). */
  value: string;
}

/** A value canonical JSON cannot spell without changing it. */
export class CanonicalJsonError extends BaseError<'canonical_json_refused', CanonicalJsonErrorDetails> {
  override name = 'CanonicalJsonError';

  constructor(path: ReadonlyArray<string | number>, value: number) {
    super('canonical_json_refused', {
      message: `canonical JSON cannot spell ${String(value)} (at ${path.length === 0 ? 'the root' : JSON.stringify(path)})`,
      details: { reason: 'non_finite_number', path: Object.freeze([...path]), value: String(value) },
    });
  }
}

/** Thrown inside the walk, where the path is not kept; canonicalJson looks the path up once it is caught. */
const NON_FINITE = Symbol('non-finite number');

export function canonicalJson(value: unknown): string {
  let sorted: unknown;
  try {
    sorted = sortKeys(value);
  } catch (err) {
    if (err === NON_FINITE) throw nonFiniteError(value);
    throw err;
  }
  return JSON.stringify(sorted);
}

function sortKeys(value: unknown): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw NON_FINITE;
    return value;
  }
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as Record<string, unknown>).sort()) {
      const sorted = sortKeys((value as Record<string, unknown>)[key]);
      // `out.__proto__ = …` would set the copy's prototype (or do nothing) instead of adding the key.
      if (key === '__proto__') Object.defineProperty(out, key, { value: sorted, enumerable: true, writable: true });
      else out[key] = sorted;
    }
    return out;
  }
  return value;
}

/** The error naming the first non-finite number of `value`, in the order sortKeys meets it. */
function nonFiniteError(value: unknown): CanonicalJsonError {
  const path: Array<string | number> = [];
  const find = (v: unknown): number | undefined => {
    if (typeof v === 'number') return Number.isFinite(v) ? undefined : v;
    if (v === null || typeof v !== 'object' || v instanceof Date) return undefined;
    const keys: Array<string | number> = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v).sort();
    for (const key of keys) {
      path.push(key);
      const found = find((v as Record<string | number, unknown>)[key]);
      if (found !== undefined) return found;
      path.pop();
    }
    return undefined;
  };
  return new CanonicalJsonError(path, find(value) ?? NaN);
}
