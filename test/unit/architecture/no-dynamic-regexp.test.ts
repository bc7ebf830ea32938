/**
 * No regular expression is built at run time from anything but constants, anywhere in the shipped trees
 * (src, signer, policy, ops, bin): a pattern compiled from user input (a seller's path pattern once was)
 * can backtrack for minutes and freeze the event loop for every tenant. Checked by scanning the sources:
 * every `RegExp(` call must take string or regex literals only, and every `.match(` / `.matchAll(` /
 * `.search(` (which compile a string argument into a RegExp) must take a regex literal or a `const` bound
 * to one in the same file. The scanner is tested on hostile samples first, so a broken scanner fails too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const TREES = ['base', 'src', 'signer', 'policy', 'ops', 'bin'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  if (!fs.existsSync(path.join(ROOT, dir))) return out;
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The text between the `(` at `open` and its matching `)`, skipping quoted strings; undefined when unbalanced. */
function argumentAt(text: string, open: number): string | undefined {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return undefined;
}

const STRING_LITERAL = String.raw`(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|\x60(?:[^\x60\\$]|\\.)*\x60)`;
const REGEX_LITERAL = String.raw`\/(?:[^/\\\n]|\\.)+\/[dgimsuvy]*`;
/** `RegExp(` arguments made of literals only: concatenated string literals or a regex literal, then optional literal flags. */
const CONSTANT_REGEXP_ARGUMENT = new RegExp(
  String.raw`^\s*(?:${STRING_LITERAL}(?:\s*\+\s*${STRING_LITERAL})*|${REGEX_LITERAL})\s*(?:,\s*${STRING_LITERAL}\s*)?,?\s*$`,
);
const REGEX_LITERAL_ONLY = new RegExp(String.raw`^\s*${REGEX_LITERAL}\s*$`);
const IDENTIFIER = /^\s*([A-Za-z_$][\w$]*)\s*$/;

function isCommentLine(text: string, index: number): boolean {
  const lineStart = text.lastIndexOf('\n', index) + 1;
  const head = text.slice(lineStart, index).trimStart();
  return head.startsWith('*') || head.startsWith('/*') || head.startsWith('//') || head.includes(' // ');
}

/** Every place in `text` where a regex is compiled from something that is not a constant. */
export function dynamicRegexps(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\bRegExp\s*\(/g)) {
    if (isCommentLine(text, m.index)) continue;
    const arg = argumentAt(text, m.index + m[0].length - 1);
    if (arg === undefined || !CONSTANT_REGEXP_ARGUMENT.test(arg)) found.push(`RegExp(${arg ?? '…'})`);
  }
  for (const m of text.matchAll(/\.(match|matchAll|search)\s*\(/g)) {
    if (isCommentLine(text, m.index)) continue;
    const arg = argumentAt(text, m.index + m[0].length - 1);
    if (arg === undefined) {
      found.push(`.${m[1]}(…)`);
      continue;
    }
    if (REGEX_LITERAL_ONLY.test(arg)) continue;
    const name = IDENTIFIER.exec(arg)?.[1];
    const boundToRegexLiteral =
      name !== undefined && new RegExp(String.raw`\bconst\s+${name}\s*=\s*${REGEX_LITERAL}\s*[;\n]`).test(text);
    if (!boundToRegexLiteral) found.push(`.${m[1]}(${arg})`);
  }
  return found;
}

describe('no regular expression built from non-constant input', () => {
  it('the scanner flags hostile samples and passes constant ones', () => {
    const hostile = [
      "const re = new RegExp('^' + pattern + '$');",
      'const re = new RegExp(`^0x[0-9a-f]{${bytes * 2}}$`);',
      'const re = RegExp(userInput, "g");',
      'return route.match(pattern);',
      'for (const m of text.matchAll(needle)) {}',
      "const needle = 'x'; text.search(needle);",
      "new RegExp(parts.join('|'))",
    ];
    for (const sample of hostile) assert.equal(dynamicRegexps(sample).length, 1, sample);
    const constant = [
      "const re = new RegExp('^[a-z]+$', 'i');",
      "const re = new RegExp('^a' + 'b$');",
      'const re = RegExp(/abc/g);',
      'if (v.match(/^0x[0-9a-f]+$/)) {}',
      'const IMPORT_PATTERN = /import "([^"]+)";/g;\nfor (const m of text.matchAll(IMPORT_PATTERN)) {}',
      ' * a comment that mentions new RegExp(userInput)',
    ];
    for (const sample of constant) assert.deepEqual(dynamicRegexps(sample), [], sample);
  });

  it(`no file under ${TREES.join(', ')} compiles a regex from anything but constants`, () => {
    const files = TREES.flatMap(sourceFiles);
    assert.ok(files.length > 100, `scanned ${files.length} files`);
    const offenders = files.flatMap((file) =>
      dynamicRegexps(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((hit) => `${file}: ${hit}`),
    );
    assert.deepEqual(offenders, []);
  });
});
