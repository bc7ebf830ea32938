/**
 * The one rule for text that is stored, or shown to a person or a model as someone's words: well-formed Unicode
 * (no lone surrogate: PostgreSQL cannot hold one) without control characters — C0 (NUL included: PostgreSQL
 * text cannot hold it), DEL and C1 — nor characters that make text display as something else or hide part of
 * it from a human reader while a model still reads it: the bidirectional embedding, override and isolate
 * controls, the direction marks (U+200E, U+200F, U+061C), the zero width space (U+200B), the byte order mark
 * (U+FEFF), the line and paragraph separators (U+2028, U+2029) and the tag characters (U+E0000–U+E007F). The zero
 * width non-joiner and joiner (U+200C, U+200D) stay: Persian text and emoji sequences need them. Prose (text
 * that may span lines) may also hold tab, line feed and carriage return.
 *
 * Here, in the floor every process stands on, so that each boundary applies the same rule: the API's route
 * schemas and the CLI's tool inputs (through src/shared/storable-text.ts), and the signer's own wire schemas
 * (signer/protocol/wire-primitives.ts), which hold it whatever the API sent. Pure, no imports.
 *
 * Defends: a value that passes one check and fails the statement that stores it, or reads differently to a
 * person than to a model. Checked in linear passes (single character classes, nothing to backtrack).
 * Does not defend: text that is well-formed but misleading (look-alike characters, a value a spreadsheet would
 * run as a formula, other invisible or default-ignorable characters such as U+2060–U+2064 or variation
 * selectors): whatever renders it encodes it for its own output.
 */

/**
 * Characters no stored text may hold, prose included: C0 controls but tab, line feed and carriage return
 * (CONTROL_OUTSIDE_PROSE adds those), DEL and C1 controls; U+061C (Arabic letter mark); U+200B (zero width
 * space), U+200E and U+200F (left-to-right and right-to-left marks); U+2028 and U+2029 (line and paragraph
 * separators) with the bidi embedding and override controls U+202A–E; the bidi isolates U+2066–9; U+FEFF (zero
 * width no-break space, byte order mark); the tag characters U+E0000–U+E007F. U+200C and U+200D are allowed.
 */
const UNSTORABLE_EVERYWHERE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;
/** Tab, line feed and carriage return: refused in every stored field but prose. */
const CONTROL_OUTSIDE_PROSE = /[\t\n\r]/;

/** True for text every stored field may hold: well-formed Unicode without the characters above. O(n). */
export function isStorableText(value: string): boolean {
  return isStorableProse(value) && !CONTROL_OUTSIDE_PROSE.test(value);
}

/** As isStorableText, tab, line feed and carriage return allowed (prose that may span lines). O(n). */
export function isStorableProse(value: string): boolean {
  return value.isWellFormed() && !UNSTORABLE_EVERYWHERE.test(value);
}

/** `value` with each character isStorableText refuses (and each lone surrogate) replaced by U+FFFD. O(n). */
export function toStorableText(value: string): string {
  if (isStorableText(value)) return value;
  let out = '';
  for (const char of value.toWellFormed()) out += isStorableText(char) ? char : '\ufffd'; // by code point
  return out;
}
