/**
 * Every code of src/shared/error-codes.ts is named by a test: some file under test/ (other than this one)
 * holds it as a string literal (`'code'`, `"code"` or `` `code` ``) — the suites that produce a code assert
 * its `error_code`. A code added without a test fails here, naming it. A retired code (RETIRED_ERROR_CODES:
 * kept for clients, produced no more) is exempt, and fails here instead if a source file produces it again.
 *
 * What it does not prove: that the test naming a code produces it (a name in a comment's backticks counts);
 * the suites themselves assert status and body.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, RETIRED_ERROR_CODES, type ErrorCode } from '../../../src/shared/error-codes.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SELF = path.resolve(import.meta.filename);

function sourcesUnder(dir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (/\.(ts|tsx|cjs|mjs)$/.test(e.name) && p !== SELF)
        out.push({ file: p, text: fs.readFileSync(p, 'utf8') });
    }
  };
  walk(path.join(ROOT, dir));
  return out;
}

const named = (text: string, code: string) =>
  text.includes(`'${code}'`) || text.includes(`"${code}"`) || text.includes(`\`${code}\``);

describe('every error code is named by a test', () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];
  const retired = new Set<ErrorCode>(RETIRED_ERROR_CODES);

  it('reads the list and the test tree', () => {
    assert.ok(codes.length > 50, `${codes.length} codes`);
    assert.ok(sourcesUnder('test').length > 100);
    for (const code of retired) assert.ok(codes.includes(code), `${code} is retired but not in ERROR_CODES`);
  });

  it('names each code that is not retired in some test file', () => {
    const tests = sourcesUnder('test');
    const untested = codes.filter((code) => !retired.has(code) && !tests.some((t) => named(t.text, code)));
    assert.deepEqual(
      untested,
      [],
      `error codes no test names (write a test that produces each):\n${untested.join('\n')}`,
    );
  });

  it('produces no retired code anywhere in the source', () => {
    const errorCodesFile = path.join(ROOT, 'src/shared/error-codes.ts');
    const sources = ['src', 'signer', 'policy', 'base'].flatMap(sourcesUnder).filter((s) => s.file !== errorCodesFile);
    const produced = [...retired].flatMap((code) =>
      sources.filter((s) => named(s.text, code)).map((s) => `${code} in ${path.relative(ROOT, s.file)}`),
    );
    assert.deepEqual(produced, [], 'a retired code is produced again: take it off RETIRED_ERROR_CODES and test it');
  });
});
