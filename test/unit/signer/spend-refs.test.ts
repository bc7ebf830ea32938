/**
 * The signer's spend references (signer/owner-policy/spend-refs.ts): the store's spelling (32 lower-case hex
 * characters), never repeated, rising within a process (so the store's index on them grows at its right edge), and
 * drawn from a per-process random prefix (two processes sharing a store do not meet).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { nextSpendRef } from '../../../signer/owner-policy/spend-refs.js';

describe('spend references', () => {
  it('are 32 lower-case hex characters, unique and rising', () => {
    const refs = Array.from({ length: 20_000 }, () => nextSpendRef());
    for (const ref of refs) assert.match(ref, /^[0-9a-f]{32}$/);
    assert.equal(new Set(refs).size, refs.length);
    for (let i = 1; i < refs.length; i++) assert.ok(refs[i - 1]! < refs[i]!, `rising at ${i}`);
    assert.equal(new Set(refs.map((r) => r.slice(0, 16))).size, 1, 'one prefix per process');
  });

  it('differ between processes', () => {
    const script = `import('./signer/owner-policy/spend-refs.ts').then((m) => console.log(m.nextSpendRef()))`;
    const run = () => execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' }).trim();
    const [a, b] = [run(), run()];
    assert.match(a, /^[0-9a-f]{32}$/);
    assert.notEqual(a.slice(0, 16), b.slice(0, 16));
  });
});
