/**
 * Builds packages/cli (the `@treasury/xx` package: docs/packages.md) from the same esbuild bundle as `npm run
 * build`'s dist/cli (./bundle-entries.ts bundleCli): the CLI and its chunks under packages/cli/dist, the entry
 * made an executable script (`#!/usr/bin/env node`) for npm's `bin`, without source maps, and the repository's
 * LICENSE beside it.
 * The bundle imports nothing but Node's built-ins and its own chunks (test/integration/build/compiled-build.test.ts
 * holds that), so the package declares no dependency: `npx @treasury/xx mcp` installs a few megabytes, nothing
 * native. Run by the package's `prepack` (`npm pack` in packages/cli).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleCli } from './bundle-entries.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGE = path.join(ROOT, 'packages/cli');

export async function bundleCliPackage(packageDir: string = PACKAGE): Promise<void> {
  const outDir = path.join(packageDir, 'dist');
  await bundleCli(outDir);
  // No source maps in the package: they would double its size, and the bundle's stack traces name its own files.
  for (const file of fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(outDir, file);
    if (file.endsWith('.map')) fs.rmSync(full);
    else if (file.endsWith('.js'))
      fs.writeFileSync(full, fs.readFileSync(full, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  }
  const entry = path.join(outDir, 'main.js');
  const code = fs.readFileSync(entry, 'utf8');
  if (!code.startsWith('#!')) fs.writeFileSync(entry, `#!/usr/bin/env node\n${code}`);
  fs.chmodSync(entry, 0o755);
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(packageDir, 'LICENSE'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  bundleCliPackage().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
