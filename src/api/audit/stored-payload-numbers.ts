/**
 * Whether the numbers of a stored audit payload are the ones its hash covers. The verifier reads a payload as
 * `payload::text`, PostgreSQL's own spelling of the stored jsonb, and hashes the canonical JSON of what
 * JSON.parse makes of it (./audit-ledger.ts). Strings, keys and structure survive that round trip exactly;
 * numbers need not: jsonb keeps a number's every digit (`numeric`), JavaScript a double. 1e400 reads as Infinity
 * (canonical JSON used to write it as null), 2.0000000000000001 and 2.0 read as 2. A row written by the ledger
 * stores the text it hashed, whose numbers are JavaScript's spellings, so each number of its `payload::text` is
 * exactly what jsonb makes of one: `jsonbNumberText(Number(token))`. Any other spelling is an edit the hash
 * does not cover.
 *
 * Defends: a stored payload whose numbers differ from the hashed text while reading back as the same doubles.
 * Does not defend: the rest of the row; that is the hash's work. Relies on PostgreSQL writing a jsonb number as
 * `numeric` does (plain decimal, no exponent, the digits it was given), which
 * test/integration/db/audit-verify.test.ts holds against the server over numbers of every size.
 */

/** The text jsonb gives back for a finite number written as JavaScript spells it (JSON.stringify). */
export function jsonbNumberText(n: number): string {
  const spelled = JSON.stringify(n);
  const e = spelled.indexOf('e');
  if (e < 0) return spelled;
  // JavaScript writes an exponent only below 1e-6 and from 1e21 on: d[.ddd]e±x.
  const negative = spelled.startsWith('-');
  const digits = spelled.slice(negative ? 1 : 0, e).replace('.', '');
  const point = 1 + Number(spelled.slice(e + 1));
  const plain =
    point >= digits.length
      ? digits + '0'.repeat(point - digits.length)
      : point <= 0
        ? '0.' + '0'.repeat(-point) + digits
        : digits.slice(0, point) + '.' + digits.slice(point);
  return (negative ? '-' : '') + plain;
}

const BACKSLASH = 0x5c;
const MINUS = 0x2d;

/** Whether a number may start at this character code (`-` or a digit). */
const startsNumber = (c: number) => c === MINUS || (c >= 0x30 && c <= 0x39);
/** Whether this character code continues a JSON number. */
const inNumber = (c: number) =>
  (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS;

/** The index of the `"` closing the string opened before `from` (-1 if none): the first one not escaped. */
function closingQuote(text: string, from: number): number {
  for (let end = text.indexOf('"', from); end >= 0; end = text.indexOf('"', end + 1)) {
    let k = end - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((end - 1 - k) % 2 === 0) return end;
  }
  return -1;
}

/**
 * Whether every number of `storedText` (a jsonb's text) is finite as a double and spelled as jsonb spells that
 * double. One pass over the text; strings are skipped with indexOf (half the time of a character loop).
 */
export function storedNumbersHold(storedText: string): boolean {
  const length = storedText.length;
  for (let i = 0; i < length; i++) {
    const c = storedText.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(storedText, i + 1);
      if (i < 0) return false;
    } else if (startsNumber(c)) {
      let end = i + 1;
      while (end < length && inNumber(storedText.charCodeAt(end))) end++;
      const token = storedText.slice(i, end);
      const n = Number(token);
      if (!Number.isFinite(n) || jsonbNumberText(n) !== token) return false;
      i = end - 1;
    }
  }
  return true;
}
