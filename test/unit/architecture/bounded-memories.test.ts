/**
 * No bounded in-memory structure in the shipped trees (base, src, signer, policy) evicts by deleting the head of a
 * Map (`map.delete(map.keys().next().value)` and its kin): V8 keeps a deleted entry's slot until the table is
 * rebuilt and walks those slots from the head again at every such eviction, so once the structure is full each
 * new key — a made-up bearer, a payment, a token — cost more than the one before (the replay guard doubled a paid
 * request's CPU; the refused-bearer counter reached ~100 µs a guess). Bounded memories use lru-cache, whose
 * eviction is O(1), or drop whole generations (src/x402/seller/replay-guard.ts). Checked by scanning the
 * sources; the scanner is tested on samples first, so a broken scanner fails too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const TREES = ['base', 'src', 'signer', 'policy'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The first key of a Map's iteration, taken to evict it: `.keys().next()`, `.entries().next()`, `.values().next()`. */
const HEAD_OF_ITERATION = /\.(?:keys|entries|values)\(\)\s*\.next\(\)/;

function headEvictions(text: string): number[] {
  const lines: number[] = [];
  text.split('\n').forEach((line, i) => {
    const code = line.trimStart();
    if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
    if (HEAD_OF_ITERATION.test(line)) lines.push(i + 1);
  });
  return lines;
}

describe('bounded memories: no eviction from the head of a Map', () => {
  it('the scanner finds the idiom in its spellings and passes what is not it', () => {
    assert.deepEqual(headEvictions('this.entries.delete(this.entries.keys().next().value!);'), [1]);
    assert.deepEqual(headEvictions('const oldest = m.entries().next().value;\nm.delete(oldest[0]);'), [1]);
    assert.deepEqual(headEvictions('x;\nmap.delete(map.values() .next().value)'), [2]);
    assert.deepEqual(headEvictions('// m.keys().next() is what we avoid\n * m.keys().next()'), []);
    assert.deepEqual(headEvictions('this.cache.pop();\nfor (const k of m.keys()) use(k);'), []);
  });

  it('none in the shipped trees', () => {
    const found: string[] = [];
    for (const tree of TREES)
      for (const file of sourceFiles(tree))
        for (const line of headEvictions(fs.readFileSync(path.join(ROOT, file), 'utf8'))) found.push(`${file}:${line}`);
    assert.deepEqual(found, [], 'evict with lru-cache (O(1)) or by whole generations, not from the head of a Map');
  });
});
