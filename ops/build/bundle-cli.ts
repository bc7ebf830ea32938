/**
 * The compiled `xx` CLI: src/cli/main.ts and everything it imports, dependencies included, bundled by esbuild
 * into dist/cli/ (main.js, and one chunk per lazily imported command under dist/cli/chunks/), which bin/xx.mjs
 * runs when it is current. `npm run build` runs it after tsc; `npm test` runs it beside the checks.
 *
 * Why a bundle and not tsc's one file per module: a command's start-up was mostly Node resolving, reading and
 * compiling modules one by one — about a thousand of them for the whole command tree, 365 of them viem's,
 * reached through its barrel — and the bundle keeps only the code the CLI reaches (docs/cli.md, "Start-up").
 *
 * Defends: the CLI that runs being built from the sources as they are — the build fails on any esbuild error
 * or warning rather than leaving a bundle that breaks at run time, and it writes into a fresh folder.
 * Does not: type-check (tsc does, `npm test`), minify (stack traces stay readable; a source map sits beside
 * each file), or bundle the servers (the API, the signer and the gate run tsc's dist/ as the images do).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI_BUNDLE_DIR = path.join(ROOT, 'dist', 'cli');

/**
 * CommonJS dependencies inside an ES module bundle call `require` for Node's built-in modules (ws, through
 * viem); esbuild leaves those calls to a `require` the module scope must provide.
 */
const REQUIRE_SHIM =
  "import { createRequire as __treasuryCreateRequire } from 'node:module';\n" +
  'const require = __treasuryCreateRequire(import.meta.url);';

/**
 * ws (viem's WebSocket transport) tries these native speed-ups with a `require` inside try/catch and runs
 * without them; they are not dependencies of the project, so they stay outside the bundle, never found.
 */
export const OPTIONAL_ADDONS: readonly string[] = ['bufferutil', 'utf-8-validate'];

/**
 * Builds the bundle into `outDir` (dist/cli/ by default) and returns esbuild's account of it (what each output
 * file imports); throws when esbuild reports an error or a warning.
 */
export async function bundleCli(outDir: string = CLI_BUNDLE_DIR): Promise<Metafile> {
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    banner: { js: REQUIRE_SHIM },
    external: [...OPTIONAL_ADDONS],
    logLevel: 'silent',
    metafile: true,
  });
  if (result.warnings.length > 0)
    throw new Error(`esbuild warned while bundling the CLI:\n${result.warnings.map((w) => w.text).join('\n')}`);
  return result.metafile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  bundleCli().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
