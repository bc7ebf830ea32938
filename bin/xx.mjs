#!/usr/bin/env node
// The `xx` command. Runs the compiled CLI (dist/src/cli/main.js, from `npm run build`) when it is newer than
// every TypeScript file under src/, policy/ and base/ (so an edit is never hidden behind a stale build), or
// when the sources are absent (an installed copy); otherwise, or with XX_USE_SOURCES=1, registers the
// TypeScript loader (tsx) and runs src/cli/main.ts. The compiled CLI starts faster (docs/performance.md).
// The freshness rule is shared with `npm start` (bin/build-freshness.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIsCurrent as compiledIsCurrent, ROOT as root } from './build-freshness.mjs';

const compiled = path.join(root, 'dist', 'src', 'cli', 'main.js');

function buildIsCurrent() {
  if (process.env.XX_USE_SOURCES === '1') return false;
  if (!fs.existsSync(compiled)) return false;
  if (!fs.existsSync(path.join(root, 'src', 'cli', 'main.ts'))) return true;
  return compiledIsCurrent('dist/src/cli/main.js', ['src', 'policy', 'base']);
}

if (buildIsCurrent()) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
