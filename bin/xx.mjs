#!/usr/bin/env node
// The `xx` command. Runs the compiled CLI (dist/src/cli/main.js, from `npm run build`) when it is newer than
// every TypeScript file under src/, policy/ and base/ (so an edit is never hidden behind a stale build), or
// when the sources are absent (an installed copy); otherwise, or with XX_USE_SOURCES=1, registers the
// TypeScript loader (tsx) and runs src/cli/main.ts. The compiled CLI starts faster (docs/performance.md).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist', 'src', 'cli', 'main.js');

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
      if (changedSince(p, builtMs)) return true;
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
