/**
 * The pay wing's floors, from its imports (src/api/pay/, docs/architecture.md "The walk of one payment"):
 * the stores call nothing of the orchestration above them (only the pure pieces: the snapshot's shape, the
 * payment's shape, the velocity window); the pure decision and its pieces do no I/O (no database driver,
 * no store implementation, no signer); and no production file imports a test fake.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const WING = 'src/api/pay';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(rel) : e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** What `file` imports: package names as written, relative imports as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [
    ...text.matchAll(
      /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
    ),
  ].map((m) => {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    return spec.startsWith('.')
      ? path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec)).replace(/\.js$/, '.ts')
      : spec;
  });
}

/** The wing's pure pieces: no I/O, usable by every floor. */
const PURE = [
  'decide-payment.ts',
  'pay-snapshot.ts',
  'rule-state.ts',
  'pay-types.ts',
  'payment-authorization.ts',
  'challenge-origin-binding.ts',
].map((f) => path.join(WING, f));

describe('pay wing: floors', () => {
  it('the stores import nothing of the wing above them but its pure pieces', () => {
    const offenders = sourceFiles(path.join(WING, 'store')).flatMap((f) =>
      importsOf(f)
        .filter(
          (i) =>
            i.startsWith(WING + path.sep) && !i.startsWith(path.join(WING, 'store') + path.sep) && !PURE.includes(i),
        )
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('the pure decision and its pieces do no I/O', () => {
    const io =
      /^(knex|pg|node:(net|fs|http|https|child_process)|lru-cache)$|src\/api\/db\/|src\/api\/(services|wallets)\/|store\/(pg-pay-stores|reservation-writer|signature-recorder|statement-connection|group-commit-queue|release-reservation|give-back-spend)\.ts$/;
    // pay-snapshot.ts takes the wallet row's type (a type import) from the wallet store's interface.
    const offenders = PURE.flatMap((f) =>
      importsOf(f)
        .filter((i) => io.test(i) && !i.endsWith('wallets/store/wallet-store.ts'))
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(offenders, []);
  });

  it('no production file imports a test fake', () => {
    const offenders = sourceFiles('src').flatMap((f) =>
      importsOf(f)
        .filter((i) => i.startsWith('test' + path.sep))
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(offenders, []);
  });
});
