// Is the compiled build (`npm run build`: tsconfig.build.json → dist/) current? One answer for every launcher
// that would rather run dist/ than the TypeScript sources through tsx: bin/xx.mjs (the CLI), `npm start`
// (ops/sandbox/start.ts: the signer, the API, the gate) and the test harnesses that start a signer or an API
// process. Plain JavaScript, so that bin/xx.mjs can use it before any TypeScript loader is registered.
//
// Defends: an edited source never runs as stale compiled code — a build counts as current only when its
// compiled file is newer than every .ts file under the given source folders (a new file counts as an edit)
// and than package-lock.json (the CLI's and the servers' entry points are bundles holding their
// dependencies' code: ops/build/bundle-entries.ts).
// Does not: build anything, compare contents, or notice a deleted source file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (this file is bin/build-freshness.mjs). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every source folder tsconfig.build.json compiles: what the API, the signer and the gate are built from. */
export const BUILD_SOURCE_DIRS = ['base', 'policy', 'signer', 'src', 'migrations', 'ops/softhsm', 'ops/net'];

/** True when some .ts file under `dir` (but for the folders in `skip`) was modified after `builtMs`. */
function changedSince(dir, builtMs, skip) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!skip.has(p) && changedSince(p, builtMs, skip)) return true;
    } else if (e.name.endsWith('.ts') && fs.statSync(p).mtimeMs > builtMs) return true;
  }
  return false;
}

/**
 * True when `compiled` (a path under dist/, relative to the root) exists and is newer than package-lock.json and
 * than every .ts file under `sourceDirs` (relative to the root) but those under `skipDirs` (folders the entry
 * point cannot import). False when it is missing. `root`: the repository's (another only in its own tests).
 */
export function buildIsCurrent(compiled, sourceDirs = BUILD_SOURCE_DIRS, skipDirs = [], root = ROOT) {
  const skip = new Set(skipDirs.map((d) => path.join(root, d)));
  let builtMs;
  try {
    builtMs = fs.statSync(path.join(root, compiled)).mtimeMs;
  } catch {
    return false;
  }
  try {
    if (fs.statSync(path.join(root, 'package-lock.json')).mtimeMs > builtMs) return false;
  } catch {
    // no lockfile (an installed copy): the sources decide
  }
  return !sourceDirs.some((d) => changedSince(path.join(root, d), builtMs, skip));
}

/**
 * How node runs a TypeScript entry point such as `signer/main.ts` (relative to the root): its compiled file
 * (dist/signer/main.js, with source maps for the stack traces) when the build is current, otherwise the source
 * itself through tsx. Absolute paths, so the caller's working directory does not matter. `nodeOptions` (such as
 * `--import <a .ts preload>`) come before the entry, with tsx registered first so that a TypeScript preload
 * loads; a preload that installs a test seam reaches the compiled entry too, as the seams are kept in the
 * process's global symbol registry (src/api/pay/pay-fault-hooks.ts). `root`: as for buildIsCurrent.
 */
export function nodeArgsFor(entry, nodeOptions = [], root = ROOT) {
  const compiled = path.join('dist', entry.replace(/\.ts$/, '.js'));
  if (!buildIsCurrent(compiled, BUILD_SOURCE_DIRS, [], root))
    return ['--import', 'tsx', ...nodeOptions, path.join(root, entry)];
  const tsx = nodeOptions.length === 0 ? [] : ['--import', 'tsx'];
  return ['--enable-source-maps', ...tsx, ...nodeOptions, path.join(root, compiled)];
}
