/**
 * Deterministic JSON: object keys sorted recursively, no whitespace. What it defends: one value, one spelling,
 * so hashes over it are reproducible — the audit chain's rows (src/api/audit/) and the owner-signed policy
 * documents (policy/signed-policy.ts), which the API, the CLI, the dashboard and the signer each hash on their own.
 * Known limits: `undefined` fields vanish and `Date`s become ISO strings (JSON.stringify's rules).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as Record<string, unknown>).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}
