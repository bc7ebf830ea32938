/**
 * Parses untrusted JSON text (decoded x402 headers, facilitator and platform replies) into plain data.
 *
 * Defends against: prototype pollution through `__proto__`, `constructor` or `prototype` keys (refused at any
 * depth, so no later spread or merge can be tricked); nesting deep enough to exhaust the stack of a recursive
 * consumer (refused beyond `maxDepth` before `JSON.parse` runs); lone UTF-16 surrogates in strings or keys
 * (refused: they cannot be re-encoded as UTF-8 and confuse comparisons).
 * Does not defend against: large inputs (callers bound the text length first); duplicate keys (JSON.parse keeps
 * the last one, as every mainstream parser does); numbers beyond 2^53 (they lose precision — x402 carries
 * amounts as strings for this reason, and the schemas require strings).
 */
import { X402DecodeError } from './x402-decode-error.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
export const DEFAULT_MAX_JSON_DEPTH = 32;
const MAYBE_UNSAFE = /__proto__|constructor|prototype|\\u/;

/** Maximum nesting of arrays and objects in `text`, counted outside string literals. */
function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** How many times `char` occurs in `text`, counted up to `limit + 1` (a native search per occurrence). */
function occurrences(text: string, char: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf(char); i !== -1 && n <= limit; i = text.indexOf(char, i + 1)) n++;
  return n;
}

/** Parses `text` as JSON; throws `X402DecodeError` ('invalid_json' or 'unsafe_json') otherwise. */
export function parseJsonSafely(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  // Nesting never exceeds the number of `{` and `[` in the text: only a text with more of them is scanned.
  const openers = occurrences(text, '{', maxDepth) + occurrences(text, '[', maxDepth);
  if (openers > maxDepth && nestingDepth(text, maxDepth) > maxDepth)
    throw new X402DecodeError('unsafe_json', `JSON nested deeper than ${maxDepth} levels`);
  // Fast path: with none of the forbidden words, no `\u` escape (which could spell one, or a lone surrogate)
  // and no raw lone surrogate in the text, no key or string can be unsafe, so the reviver has nothing to find.
  if (!MAYBE_UNSAFE.test(text) && text.isWellFormed()) {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new X402DecodeError('invalid_json', 'not valid JSON', { cause: err });
    }
  }
  let unsafe: string | undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) unsafe ??= `forbidden key ${JSON.stringify(key)}`;
      else if (!key.isWellFormed()) unsafe ??= 'key with a lone surrogate';
      else if (typeof value === 'string' && !value.isWellFormed()) unsafe ??= 'string with a lone surrogate';
      return value;
    });
  } catch (err) {
    throw new X402DecodeError('invalid_json', 'not valid JSON', { cause: err });
  }
  if (unsafe !== undefined) throw new X402DecodeError('unsafe_json', `refused JSON: ${unsafe}`);
  return parsed;
}
