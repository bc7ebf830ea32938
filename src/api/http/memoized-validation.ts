/**
 * A route schema's successful parses remembered by the exact JSON text of the request body, so that a body
 * sent again — an agent paying the same x402 resource sends the same `payment_requirements` and capability
 * each time — is answered from memory instead of being parsed by zod again (on the pay route zod's walk of
 * the body was about a third of the route's own CPU). The schema stays the one definition of the body: a
 * text never seen, or too long to remember, is parsed by it (../http/validate.ts), and a body it refuses is
 * refused by it every time with the same issues (refusals are never remembered).
 *
 * Why it is exact: the body is `JSON.parse` of that text (./middleware/json-body.ts), and the schemas this is
 * used with are pure functions of their input (no clock, no I/O), so equal texts parse to equal results.
 * What it hands out is deeply frozen: every request gets the same object, and nothing may change it.
 *
 * Defends: memory — at most `maxEntries` texts of at most `maxTextChars` characters each.
 * Does not defend: a schema with side effects or one that reads the clock — do not memoize one.
 */
import type { z } from 'zod';
import { LRUCache } from 'lru-cache';
import { validate } from './validate.js';

export interface MemoizedValidationOptions {
  /** Distinct body texts remembered at once (least recently used forgotten first). */
  maxEntries: number;
  /** Longer texts are parsed every time and not remembered. */
  maxTextChars: number;
}

export class MemoizedValidation<S extends z.ZodType> {
  private readonly parsed: LRUCache<string, { value: z.infer<S> }>;

  constructor(
    private readonly schema: S,
    private readonly options: MemoizedValidationOptions,
  ) {
    this.parsed = new LRUCache({ max: options.maxEntries });
  }

  /**
   * `value` (the body parsed from `text`) through the schema, as `validate` answers it; `text` undefined (no
   * body, or one not read as text) is parsed every time.
   */
  validate(text: string | undefined, value: unknown): z.infer<S> {
    const rememberable = text !== undefined && text.length <= this.options.maxTextChars;
    if (rememberable) {
      const hit = this.parsed.get(text);
      if (hit) return hit.value;
    }
    const result = deepFreeze(validate(this.schema, value));
    if (rememberable) this.parsed.set(text, { value: result });
    return result;
  }
}

/** `value`, every object and array in it frozen (parsed JSON: no cycles). */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
