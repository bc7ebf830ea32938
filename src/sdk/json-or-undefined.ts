/**
 * `jsonOrUndefined`: a seller's answer body read as JSON when it is JSON (a 402 body challenge, a refusal's
 * `error`), undefined when it is not — `JSON.parse` never yields undefined, so the two cannot be confused.
 *
 * Defends against: a body that is not JSON throwing out of the buyer. Does not defend against: JSON of any
 * shape (callers check it with a schema or field by field).
 */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
