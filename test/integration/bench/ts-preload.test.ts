/**
 * How the benches start a compiled service with their TypeScript probes (bench/support/service-bench-parts.ts
 * `serviceArgs`, bench/support/ts-preload.mjs): the probe runs, and the service's own modules load as production
 * loads them — not passed through tsx's transform, and with Node's source maps off (under tsx's global loader the
 * API's bundle and its decoded source map held about 60 MB of its old generation, docs/performance.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceArgs } from '../../../bench/support/service-bench-parts.js';

describe('bench: a compiled service with a TypeScript probe', function () {
  this.timeout(60_000);
  let root: string;
  const forced = process.env.BENCH_CODE;

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-preload-'));
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ type: 'module' }));
    fs.mkdirSync(path.join(root, 'dist', 'svc'), { recursive: true });
    fs.mkdirSync(path.join(root, 'svc'));
    fs.writeFileSync(path.join(root, 'svc', 'main.ts'), 'export {};\n');
    // Spaced as no transform would leave it: its text is the proof that nothing rewrote the module.
    fs.writeFileSync(
      path.join(root, 'dist', 'svc', 'main.js'),
      'function untouched(a,b){return a+b}\n' +
        'console.log(JSON.stringify({ probe: globalThis.probeLoaded === true, sourceMaps: process.sourceMapsEnabled, text: untouched.toString() }));\n',
    );
    fs.writeFileSync(
      path.join(root, 'probe.ts'),
      'const loaded: boolean = true;\n(globalThis as { probeLoaded?: boolean }).probeLoaded = loaded;\n',
    );
    process.env.BENCH_CODE = 'dist';
  });
  after(() => {
    if (forced === undefined) delete process.env.BENCH_CODE;
    else process.env.BENCH_CODE = forced;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('runs the probe and leaves the service untransformed, source maps off', () => {
    const args = serviceArgs(root, 'svc/main.ts', [], [path.join(root, 'probe.ts')]);
    const out = JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim()) as {
      probe: boolean;
      sourceMaps: boolean;
      text: string;
    };
    assert.deepEqual(out, { probe: true, sourceMaps: false, text: 'function untouched(a,b){return a+b}' });
  });
});
