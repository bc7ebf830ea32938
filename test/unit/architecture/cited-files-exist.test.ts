/**
 * Every repository file the docs and the code's comments cite by path (`test/…/x.test.ts`, `src/…/y.ts`,
 * `docs/…/z.md`, …) exists: a test renamed or a module moved fails here, naming the page or file that still
 * cites the old path (ADR 0006 once cited a test that had been renamed).
 *
 * What it does not check: a file cited by its bare name (`pay-path.test.ts`), nor that what the citation
 * says of the file is true. The layer-lint test's probe files (`…/probe.ts`) are written while it runs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCANNED = ['docs', 'src', 'signer', 'policy', 'base', 'ops', 'bench', 'test'];
const CITATION =
  /(?<![\w./-])((?:test|src|signer|policy|base|ops|bench|docs|migrations)\/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:ts|md|cjs|mjs|json))\b/g;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!['node_modules', 'dist', '.git'].includes(e.name)) out.push(...filesUnder(p));
    } else if (/\.(ts|tsx|md|cjs|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

function citedPaths(text: string): string[] {
  return [...text.matchAll(CITATION)].map((m) => m[1]!).filter((p) => path.basename(p) !== 'probe.ts');
}

describe('files cited by path exist', () => {
  it('finds citations', () => {
    assert.deepEqual(citedPaths('see `test/integration/api/pay-path.test.ts` and docs/api.md.'), [
      'test/integration/api/pay-path.test.ts',
      'docs/api.md',
    ]);
    assert.deepEqual(citedPaths('https://example.com/docs/x.md and ./src/y.ts'), []);
  });

  it('every cited path is a file of the repository', () => {
    const pages = [...SCANNED.flatMap((d) => filesUnder(path.join(ROOT, d))), path.join(ROOT, 'README.md')];
    const missing: string[] = [];
    for (const page of pages) {
      for (const cited of new Set(citedPaths(fs.readFileSync(page, 'utf8'))))
        if (!fs.existsSync(path.join(ROOT, cited))) missing.push(`${path.relative(ROOT, page)} cites ${cited}`);
    }
    assert.deepEqual(missing, [], `cited files that do not exist:\n${missing.join('\n')}`);
  });
});
