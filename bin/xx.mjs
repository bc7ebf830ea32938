#!/usr/bin/env node
// The `xx` command. Runs the compiled CLI — one esbuild bundle, dist/cli/main.js, from `npm run build`
// (ops/build/bundle-entries.ts) — when it is newer than package-lock.json (the dependencies it holds) and than
// every TypeScript file the CLI can import (src/ but for the two servers it may not import, src/api/ and
// src/gate/ (eslint.config.js), policy/ and base/: an edit is never hidden behind a stale build), or when
// the sources are absent (an installed copy); otherwise, or with XX_USE_SOURCES=1, registers the
// TypeScript loader (tsx) and runs src/cli/main.ts. The compiled CLI starts faster (docs/cli.md,
// "Start-up"). The freshness rule is shared with `npm start` (bin/build-freshness.mjs). On Node 22.1 and
// later it turns on Node's compile cache (compiled code kept on disk between runs, keyed by each file's
// content; NODE_DISABLE_COMPILE_CACHE=1 turns it off); Node 20 has none.
import module from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIsCurrent as compiledIsCurrent, ROOT as root } from './build-freshness.mjs';

module.enableCompileCache?.();

const compiled = path.join(root, 'dist', 'cli', 'main.js');
function buildIsCurrent() {
  if (process.env.XX_USE_SOURCES === '1') return false;
  if (!fs.existsSync(compiled)) return false;
  if (!fs.existsSync(path.join(root, 'src', 'cli', 'main.ts'))) return true;
  // src/api/ and src/gate/: the two servers, which the CLI may not import (eslint.config.js).
  return compiledIsCurrent('dist/cli/main.js', ['src', 'policy', 'base'], ['src/api', 'src/gate']);
}

if (buildIsCurrent()) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
