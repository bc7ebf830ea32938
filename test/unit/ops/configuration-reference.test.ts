/**
 * docs/configuration.md is the generated reference (ops/docs/configuration-reference.ts): it must be what the
 * generator writes today (a schema default or meaning changed without `npm run docs:config` fails here), it
 * must document every variable it lists, and it must name every environment variable the code reads —
 * found by scanning the sources (src/, signer/, base/, policy/, ops/, bin/, test/support/) for
 * `process.env.X`, `process.env['X']`, `env.X` and any TREASURY_/XX_/SOFTHSM2_ name.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  CONFIGURATION_DOC,
  renderConfigurationReference,
  UNDOCUMENTED,
} from '../../../ops/docs/configuration-reference.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCANNED = ['src', 'signer', 'base', 'policy', 'ops', 'bin', 'test/support'];

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => fs.statSync(path.join(ROOT, f)).isFile());
}

const READ_PATTERNS = [
  /process\.env\.([A-Z_][A-Z0-9_]*)/g,
  /process\.env\[['"]([A-Z0-9_]+)['"]\]/g,
  /\benv\.([A-Z][A-Z0-9_]+)\b/g,
  /\b((?:TREASURY|XX|SOFTHSM2)_[A-Z0-9_]*[A-Z0-9])\b/g,
];

/** Every variable name the sources read or name, with the first file it was found in. */
function variablesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const dir of SCANNED)
    for (const file of sourceFiles(dir)) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const pattern of READ_PATTERNS)
        for (const m of text.matchAll(pattern)) if (!found.has(m[1]!)) found.set(m[1]!, file);
    }
  return found;
}

/** The variables the reference's tables name. */
function documented(doc: string): Set<string> {
  return new Set([...doc.matchAll(/^\| `([A-Z_][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
}

describe('docs/configuration.md (generated configuration reference)', () => {
  const doc = fs.readFileSync(CONFIGURATION_DOC, 'utf8');

  it('is what ops/docs/configuration-reference.ts generates today (run `npm run docs:config`)', () => {
    assert.equal(doc, renderConfigurationReference(), 'docs/configuration.md is stale: run npm run docs:config');
  });

  it('gives every variable it lists a meaning (ops/docs/configuration-entries.ts)', () => {
    const missing = doc.split('\n').filter((l) => l.includes(UNDOCUMENTED));
    assert.deepEqual(missing, [], 'add these to their process file under ops/docs/entries/');
  });

  it('names every environment variable the code reads', () => {
    const inDoc = documented(doc);
    const found = variablesInCode();
    assert.ok(found.size > 100, `only ${found.size} variables found: the scan is broken`);
    const missing = [...found].filter(([name]) => !inDoc.has(name)).map(([name, file]) => `${name} (${file})`);
    assert.deepEqual(
      missing,
      [],
      'read in code, missing from docs/configuration.md (add them under ops/docs/entries/)',
    );
  });

  it('finds a variable a new module would read (the scan is not blind)', () => {
    const probe = "const x = process.env.TREASURY_PROBE_ONLY; const y = env['XX_PROBE'];";
    const names = READ_PATTERNS.flatMap((p) => [...probe.matchAll(p)].map((m) => m[1]));
    assert.ok(names.includes('TREASURY_PROBE_ONLY'));
    assert.ok(!documented(doc).has('TREASURY_PROBE_ONLY'));
  });
});
