/**
 * The servers' bundles (ops/build/bundle-entries.ts) carry source maps without the sources' text: a stack trace
 * of a compiled signer, API or gate started with `--enable-source-maps` (the test harnesses and `npm start`,
 * bin/build-freshness.mjs) still names the TypeScript file and line, read from the checkout, while Node parses a
 * map a quarter of the size at every start (the API's was 13 MB, 9.8 of them the embedded sources: about 0.45 s
 * of CPU a start; docs/testing.md). Checked on the checkout's build, which `npm test` makes first.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { buildIsCurrent, BUILD_SOURCE_DIRS } from '../../../bin/build-freshness.mjs';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Each server bundle, and one function of ours it holds: `export function <name>(` in `source`. */
const CASES = [
  { bundle: 'dist/signer/main.js', name: 'finalizeSignature', source: 'signer/ecdsa/finalize-signature.ts' },
  { bundle: 'dist/src/api/main.js', name: 'payRoutes', source: 'src/api/pay/pay-routes.ts' },
  { bundle: 'dist/src/gate/main.js', name: 'createGateApp', source: 'src/gate/gate-app.ts' },
] as const;

/** The 0-based line and column of the first line of `text` that starts with `prefix` (after indentation). */
function positionOf(text: string, prefix: string): { line: number; column: number } {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.trimStart().startsWith(prefix));
  assert.ok(line >= 0, `no line starts with ${prefix}`);
  return { line, column: lines[line]!.indexOf(prefix) };
}

describe("the servers' bundles: source maps that name the TypeScript, without its text", function () {
  before(function () {
    for (const { bundle } of CASES)
      assert.ok(buildIsCurrent(bundle, BUILD_SOURCE_DIRS), `${bundle} is older than its sources: npm run build`);
  });

  for (const { bundle, name, source } of CASES)
    it(`${bundle}: ${name} maps to ${source} at its own line; no sourcesContent`, () => {
      const mapFile = path.join(ROOT, `${bundle}.map`);
      const payload = JSON.parse(fs.readFileSync(mapFile, 'utf8')) as { sourcesContent?: unknown; sources: string[] };
      assert.equal(payload.sourcesContent, undefined, 'the map embeds the sources');

      const compiled = positionOf(fs.readFileSync(path.join(ROOT, bundle), 'utf8'), `function ${name}(`);
      const entry = new SourceMap(payload as never).findEntry(compiled.line, compiled.column) as {
        originalSource?: string;
        originalLine?: number;
      };
      assert.ok(entry.originalSource, `no mapping at ${bundle}:${compiled.line + 1}`);
      const original = path.resolve(path.dirname(mapFile), entry.originalSource);
      assert.equal(path.relative(ROOT, original), source);
      const expected = positionOf(fs.readFileSync(original, 'utf8'), `export function ${name}(`);
      assert.equal(entry.originalLine, expected.line);
    });
});
