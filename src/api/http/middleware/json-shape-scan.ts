/**
 * A bounded scan of JSON text before it is parsed: how deep its arrays and objects nest and how many object
 * members it holds, stopping at the first bound passed. One pass over the characters, no allocation, no
 * recursion; strings are skipped (a `{` or `:` inside one counts for nothing, an escaped quote does not end one).
 *
 * Defends: a body that is cheap to send and dear to hold — 90,000 keys in 1 MB become 90,000 properties that
 * every later step (the schemas, the stores, the audit hash) walks; 100,000 nested brackets exhaust a
 * recursive walk's stack. Either is refused here, before `JSON.parse` builds anything.
 * Does not: check the text is JSON (the parser does, after); bound array lengths or string sizes (the byte
 * limit and each route's schema do).
 */

export interface JsonShapeLimits {
  /** Arrays and objects nested inside one another, the outermost counting 1. */
  maxDepth: number;
  /** Object members in the whole body, at every depth. */
  maxKeys: number;
}

/** The first bound the text passes, or undefined when it stays within both. */
export type JsonShapeExcess = { limit: 'depth'; max: number } | { limit: 'keys'; max: number } | undefined;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

export function scanJsonShape(text: string, limits: JsonShapeLimits): JsonShapeExcess {
  let depth = 0;
  let keys = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i + 1);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) return { limit: 'depth', max: limits.maxDepth };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      // Outside strings, each colon of valid JSON separates one object member's key from its value.
      if (++keys > limits.maxKeys) return { limit: 'keys', max: limits.maxKeys };
    }
  }
  return undefined;
}

/** The index of the quote closing the string whose first character is at `from` (or the text's end). */
function endOfString(text: string, from: number): number {
  let i = from;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return text.length;
    // The quote is escaped when an odd number of backslashes precede it.
    let slashes = 0;
    for (let j = quote - 1; j >= from && text.charCodeAt(j) === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return quote;
    i = quote + 1;
  }
}
