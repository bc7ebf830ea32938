/**
 * base/canonical-json.ts as every audit row and signed policy so far was hashed with it, frozen here so the tests
 * can hold today's spelling to it: its sorted copy assigned every key (so `__proto__` set the copy's prototype and
 * was lost), and JSON.stringify wrote non-finite numbers as null.
 */
export function earlierCanonicalJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v as Record<string, unknown>).sort())
        out[key] = sortKeys((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sortKeys(value));
}
