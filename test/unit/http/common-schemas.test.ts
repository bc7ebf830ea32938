/**
 * The shared bounds of route schemas (src/api/http/schemas/common-schemas.ts): amounts at most 10^9 USD
 * (10^15 raw units) whatever field carries them, and stored text without control characters, bidi
 * controls and marks, invisible characters (zero width space, BOM, tags), line separators or lone surrogates —
 * checked in linear time.
 */
import assert from 'node:assert/strict';
import { MAX_AMOUNT_MICRO, rawAmount } from '../../../src/shared/amount-bounds.js';
import {
  boundedPolicy,
  isStorableText,
  plainText,
  storedProse,
  storedString,
  toStorableText,
  usdAmount,
  usdAmountOrZero,
} from '../../../src/api/http/schemas/common-schemas.js';

/** Whether `schema` takes `value`. */
const parses = (schema: { safeParse(value: unknown): { success: boolean } }, value: unknown): boolean =>
  schema.safeParse(value).success;

describe('common schemas: amounts', () => {
  it('takes amounts up to 10^9 USD and refuses one micro-USD more, in every spelling', () => {
    assert.equal(MAX_AMOUNT_MICRO, 10n ** 15n);
    assert.equal(parses(usdAmount, '1000000000'), true);
    assert.equal(parses(usdAmount, '999999999.999999'), true);
    assert.equal(parses(usdAmountOrZero, '0'), true);
    for (const v of ['1000000000.000001', '9223372036854.775807', '9223372036854.775808', '100000000000000']) {
      assert.equal(parses(usdAmount, v), false, v);
      assert.equal(parses(usdAmountOrZero, v), false, v);
    }
    assert.equal(parses(rawAmount, '1000000000000000'), true);
    for (const v of [
      '1000000000000001',
      '9223372036854775807',
      '9223372036854775808',
      '18446744073709551616',
      '0',
      '01',
      '1e3',
    ]) {
      assert.equal(parses(rawAmount, v), false, v);
    }
  });

  it('holds every cap of a wallet policy to the bound, naming the field', () => {
    assert.equal(
      parses(boundedPolicy, { daily_cap_usd: '1000000000', capability_cap_usd: { search: '0', 'x*': '1000000000' } }),
      true,
    );
    for (const field of ['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd']) {
      const parsed = boundedPolicy.safeParse({ [field]: '1000000000.000001' });
      assert.equal(parsed.success, false, field);
      assert.deepEqual(
        parsed.error!.issues.map((i) => i.path),
        [[field]],
      );
    }
    const parsed = boundedPolicy.safeParse({ capability_cap_usd: { search: '2000000000' } });
    assert.deepEqual(
      parsed.error!.issues.map((i) => i.path),
      [['capability_cap_usd', 'search']],
    );
  });
});

describe('common schemas: stored text', () => {
  it('takes any well-formed printable text, including non-Latin scripts, emoji and joiners (ZWNJ, ZWJ)', () => {
    for (const v of [
      'plain',
      'ü€😀',
      'https://seller.example/a?q="x"&b=\\path',
      '=HYPERLINK("x")',
      '\u200d',
      '\u200c',
      'می\u200cخواهم',
      '👩\u200d💻',
      'עברית',
    ])
      assert.equal(isStorableText(v), true, JSON.stringify(v));
  });

  it('refuses C0 (NUL, tab, newline, ESC), DEL, C1, bidi controls and marks, invisibles, separators, lone surrogates', () => {
    const bad = [
      '\u0000',
      'a\u0000b',
      '\t',
      'a\nb',
      '\r',
      '\u001b[31m',
      '\u007f',
      '\u0080',
      '\u0085',
      '\u009b',
      '\u009f',
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2069',
      'Acme\u200f',
      '\u200e',
      '\u061c',
      'zero\u200bwidth',
      '\ufeffname',
      'a\u2028b',
      '\u2029',
      'x\u{e0041}',
      '\u{e0000}',
      '\u{e007f}',
      '\ud800',
      'x\udfffy',
      '\udbff',
      '😀'[0]!,
    ];
    for (const v of bad) {
      assert.equal(isStorableText(v), false, JSON.stringify(v));
      assert.equal(storedString(100).safeParse(v).success, false, JSON.stringify(v));
      assert.equal(plainText(100).safeParse(`x${v}x`).success, false, JSON.stringify(v));
      assert.equal(isStorableText(toStorableText(v)), true, JSON.stringify(v));
    }
    assert.equal(toStorableText('a\u0000b\ud800c\u202e'), 'a\ufffdb\ufffdc\ufffd');
    assert.equal(toStorableText('x\u{e0041}\u200by\u200dz'), 'x\ufffd\ufffdy\u200dz', 'a tag is one character');
  });

  it('prose (an x402 description) may span lines and hold tabs; nothing else changes', () => {
    assert.equal(storedProse(100).safeParse('Weather\r\nfor a city:\tnow').success, true);
    for (const v of [
      '\u0000',
      '\u000b',
      '\u001b[31m',
      '\u007f',
      '\u0085',
      '\u202e',
      '\u2028',
      '\u200b',
      '\u{e0041}',
      '\ud800',
    ])
      assert.equal(storedProse(100).safeParse(`a${v}b`).success, false, JSON.stringify(v));
  });

  it('checks in linear time, and not past the length bound', () => {
    // Linear: a scan of 4 MB takes milliseconds (5 to 50 here), a quadratic one 10^13 steps. A budget of a
    // second on the fastest of three runs (the one the rest of the machine disturbed least) tells the two
    // apart under any load; a ratio of sizes did not (caches make 4 MB dearer per byte than 1 MB).
    const text = (n: number) => `${'a'.repeat(n)}\u0000`.normalize(); // normalize(): one flat string
    const long = text(4_000_000);
    let fastest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      assert.equal(isStorableText(long), false);
      fastest = Math.min(fastest, performance.now() - started);
    }
    assert.ok(fastest < 1_000, `${fastest.toFixed(2)} ms for 4 MB`);
    // Refused on its length first: the one issue is the length's; the storable check (a refinement) never ran.
    const refused = storedString(100).safeParse(long);
    assert.deepEqual(
      refused.error?.issues.map((i) => i.code),
      ['too_big'],
      'only the length is reported: the text itself was not scanned',
    );
  });
});
