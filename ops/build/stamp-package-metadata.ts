/**
 * The packing check of the published packages (docs/packages.md, "Repository and home page"): run in a
 * package folder by its npm scripts. `check` (first in prepack, before the build) refuses early; `stamp` (last in
 * prepack) writes `repository` (with `directory`) and `homepage`
 * (./package-metadata.ts) into the folder's package.json, or refuses — exit 1, naming what is missing — so no
 * tarball, which may be published as it is, leaves without them. `unstamp` (postpack, postpublish) takes them out
 * again, so the committed manifests never carry an address; after `npm pack` it runs at once, under `npm publish`
 * only after the publish (npm re-reads the manifest after packing and sends that to the registry).
 *
 * Defends: a package published without its source address, or with one made up or local. Does not: survive
 * an interrupted publish tidily — the manifest then keeps the fields until the next `unstamp` or pack (git shows it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageMetadata, type PackageMetadata } from './package-metadata.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
const writeJson = (file: string, value: unknown) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** The metadata for `packageDir`; throws naming every problem when there is none to write. */
export function resolvePackageMetadata(
  packageDir: string,
  env: Readonly<Record<string, string | undefined>>,
): PackageMetadata {
  const directory = path.relative(ROOT, packageDir).split(path.sep).join('/');
  const result = packageMetadata(readJson(path.join(ROOT, 'package.json')), env, directory);
  if (!result.ok)
    throw new Error(
      `refusing to pack ${directory} without its repository and homepage:\n  ${result.problems.join('\n  ')}`,
    );
  return result.metadata;
}

/** Writes the metadata into `packageDir`'s package.json; throws naming every problem when it cannot. */
export function stampPackageMetadata(packageDir: string, env: Readonly<Record<string, string | undefined>>): void {
  const metadata = resolvePackageMetadata(packageDir, env);
  const file = path.join(packageDir, 'package.json');
  writeJson(file, { ...readJson(file), ...metadata });
}

/** Takes the stamped fields out of `packageDir`'s package.json (nothing when they are absent). */
export function unstampPackageMetadata(packageDir: string): void {
  const file = path.join(packageDir, 'package.json');
  const { repository: _repository, homepage: _homepage, ...rest } = readJson(file);
  writeJson(file, rest);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command] = process.argv.slice(2);
  try {
    if (command === 'check') resolvePackageMetadata(process.cwd(), process.env);
    else if (command === 'stamp') stampPackageMetadata(process.cwd(), process.env);
    else if (command === 'unstamp') {
      const publishing = process.env.npm_command === 'publish' && process.env.npm_lifecycle_event === 'postpack';
      if (!publishing) unstampPackageMetadata(process.cwd());
    } else throw new Error('usage: stamp-package-metadata.ts check|stamp|unstamp (in a package folder)');
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
