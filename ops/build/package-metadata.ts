/**
 * Where the published packages (packages/sdk, packages/x402-koa, packages/cli: docs/packages.md) say their
 * source and home page live: `repository` (with `directory`, the package's folder) and `homepage`, from ONE
 * place — the root package.json's `repository` / `homepage` when it carries them, else
 * TREASURY_PACKAGE_REPOSITORY_URL / TREASURY_PACKAGE_HOMEPAGE at pack time. The package manifests in the
 * repository carry neither: no address is written twice, and none is made up. Pure; the I/O is in
 * ./stamp-package-metadata.ts.
 *
 * Defends: a package published with no way back to its source, or pointing at a developer's machine — both
 * addresses must be https (a repository also `git+https:`), on a host that is not loopback, private or
 * `localhost`. Does not defend: an address that is public but wrong (nothing here can know the right one).
 */
import net from 'node:net';
import { z } from 'zod';

export const REPOSITORY_VARIABLE = 'TREASURY_PACKAGE_REPOSITORY_URL';
export const HOMEPAGE_VARIABLE = 'TREASURY_PACKAGE_HOMEPAGE';

/** A host a stranger could reach: not loopback, private, link-local, unspecified or a `localhost` name. */
function isPublicHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  if (net.isIPv4(host)) {
    const [a, b] = host.split('.').map(Number) as [number, number];
    return !(
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168)
    );
  }
  if (net.isIPv6(host)) return !(host === '::' || host === '::1' || /^f[cd]/i.test(host) || /^fe[89ab]/i.test(host));
  return host.includes('.');
}

const publicUrl = (schemes: readonly string[]) =>
  z
    .string()
    .max(2048)
    .refine(
      (raw) => {
        try {
          const url = new URL(raw);
          return (
            schemes.includes(url.protocol) && url.username === '' && url.password === '' && isPublicHost(url.hostname)
          );
        } catch {
          return false;
        }
      },
      `expected a ${schemes.join(' or ')} URL on a public host, with no credentials`,
    );

const repositoryUrlSchema = publicUrl(['https:', 'git+https:']);
const homepageSchema = publicUrl(['https:']);

/** The root manifest's fields as npm allows them: `repository` a URL or `{ url }`, `homepage` a URL. */
const rootFieldsSchema = z
  .object({
    repository: z.union([z.string(), z.object({ url: z.string() }).loose()]).optional(),
    homepage: z.string().optional(),
  })
  .loose();

export type PackageMetadata = {
  repository: { type: 'git'; url: string; directory: string };
  homepage: string;
};

export type MetadataResult = { ok: true; metadata: PackageMetadata } | { ok: false; problems: string[] };

/**
 * `repository` and `homepage` for the package in `directory` (e.g. `packages/sdk`): each from the root
 * manifest when it has it, else from its variable; every problem named when either is missing or unfit.
 */
export function packageMetadata(
  rootManifest: unknown,
  env: Readonly<Record<string, string | undefined>>,
  directory: string,
): MetadataResult {
  const root = rootFieldsSchema.parse(rootManifest);
  const rootRepository = typeof root.repository === 'string' ? root.repository : root.repository?.url;
  const sources = [
    ['repository', rootRepository, REPOSITORY_VARIABLE, repositoryUrlSchema],
    ['homepage', root.homepage, HOMEPAGE_VARIABLE, homepageSchema],
  ] as const;
  const problems: string[] = [];
  const values: string[] = [];
  for (const [field, fromRoot, variable, schema] of sources) {
    const raw = fromRoot ?? env[variable];
    const where = fromRoot !== undefined ? `package.json "${field}"` : variable;
    if (raw === undefined || raw === '') {
      problems.push(`${field}: set "${field}" in the root package.json or ${variable}`);
      continue;
    }
    const parsed = schema.safeParse(raw);
    if (parsed.success) values.push(parsed.data);
    else problems.push(`${field} (${where}): ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    metadata: { repository: { type: 'git', url: values[0]!, directory }, homepage: values[1]! },
  };
}
