#!/usr/bin/env node
// The `xx` command. Runs the compiled CLI (dist/src/cli/main.js, from `npm run build`) when it is newer than
// every TypeScript file the CLI can import (src/ but for the two servers it may not import, src/api/ and
// src/gate/ (eslint.config.js), policy/ and base/: an edit is never hidden behind a stale build), or when
// the sources are absent (an installed copy); otherwise, or with XX_USE_SOURCES=1, registers the
// TypeScript loader (tsx) and runs src/cli/main.ts. The compiled CLI starts faster (docs/cli.md,
// "Start-up"). On Node 22.1 and later it turns on Node's compile cache (compiled code kept on disk between
// runs, keyed by each file's content; NODE_DISABLE_COMPILE_CACHE=1 turns it off); Node 20 has none.
import module from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

module.enableCompileCache?.();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist', 'src', 'cli', 'main.js');
/** Folders the CLI never imports, so an edit there does not make its build stale. */
const notImported = new Set([path.join(root, 'src', 'api'), path.join(root, 'src', 'gate')]);

/** True when some .ts file under `dir` was modified after `builtMs`. */
function changedSince(dir, builtMs) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!notImported.has(p) && changedSince(p, builtMs)) return true;
    } else if (e.name.endsWith('.ts') && fs.statSync(p).mtimeMs > builtMs) return true;
  }
  return false;
}

function buildIsCurrent() {
  if (process.env.XX_USE_SOURCES === '1') return false;
  let builtMs;
  try {
    builtMs = fs.statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
  if (!fs.existsSync(path.join(root, 'src', 'cli', 'main.ts'))) return true;
  return !['src', 'policy', 'base'].some((d) => changedSince(path.join(root, d), builtMs));
}

if (buildIsCurrent()) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
