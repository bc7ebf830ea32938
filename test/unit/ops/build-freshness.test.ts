/**
 * The rule every launcher follows before it runs compiled code instead of the sources (bin/build-freshness.mjs):
 * a build counts as current only when its entry point is newer than every source it is built from and than
 * package-lock.json (the entry points are bundles that hold their dependencies' code), so an edit or a changed
 * dependency never runs as stale compiled code; and how node is told to run an entry point, a test preload
 * included. On a throwaway tree with set modification times, never the repository's own.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildIsCurrent, nodeArgsFor } from '../../../bin/build-freshness.mjs';
import { fileTempDir } from '../../support/temp-dirs.js';

/** Writes `file` under `root` with its modification time `secondsAgo` in the past. */
function writeAged(root: string, file: string, secondsAgo: number): void {
  const full = path.join(root, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, '// test\n');
  const at = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(full, at, at);
}

/** A tree with one source, its build (newer) and a lockfile (older than the build). */
function tree(): string {
  const root = fileTempDir('treasury-freshness-');
  writeAged(root, 'package-lock.json', 300);
  writeAged(root, 'app/api/main.ts', 200);
  writeAged(root, 'app/gate/other.ts', 200);
  writeAged(root, 'dist/app/api/main.js', 100);
  return root;
}

describe('build freshness: when the launchers run the compiled build', () => {
  it('a build newer than every source and than package-lock.json is current', () => {
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], [], tree()), true);
  });

  it('a source edited after the build, or a new source, makes it stale', () => {
    const edited = tree();
    writeAged(edited, 'app/api/main.ts', 10);
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], [], edited), false);
    const added = tree();
    writeAged(added, 'app/api/deep/new-file.ts', 10);
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], [], added), false);
  });

  it('a package-lock.json newer than the build makes it stale: the bundles hold the dependencies', () => {
    const root = tree();
    writeAged(root, 'package-lock.json', 10);
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], [], root), false);
  });

  it('an edit in a folder the entry point cannot import does not; a missing build is never current', () => {
    const root = tree();
    writeAged(root, 'app/gate/other.ts', 10);
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], ['app/gate'], root), true);
    assert.equal(buildIsCurrent('dist/app/api/main.js', ['app'], [], root), false);
    assert.equal(buildIsCurrent('dist/absent.js', ['app'], [], root), false);
  });

  it('nodeArgsFor: the compiled entry when current, the source through tsx when not; a preload reaches either', () => {
    const root = tree();
    writeAged(root, 'dist/signer/main.js', 100);
    writeAged(root, 'signer/main.ts', 200);
    const compiled = path.join(root, 'dist/signer/main.js');
    const source = path.join(root, 'signer/main.ts');
    const preload = ['--import', '/x/preload.ts'];
    assert.deepEqual(nodeArgsFor('signer/main.ts', [], root), ['--enable-source-maps', compiled]);
    assert.deepEqual(nodeArgsFor('signer/main.ts', preload, root), [
      '--enable-source-maps',
      '--import',
      'tsx',
      ...preload,
      compiled,
    ]);
    writeAged(root, 'signer/main.ts', 10);
    assert.deepEqual(nodeArgsFor('signer/main.ts', [], root), ['--import', 'tsx', source]);
    assert.deepEqual(nodeArgsFor('signer/main.ts', preload, root), ['--import', 'tsx', ...preload, source]);
  });
});
