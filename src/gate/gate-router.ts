/**
 * Which seller a request is for, and the path its origin sees: by host name when the gate has a base domain
 * (`<slug>.<GATE_BASE_DOMAIN>`, the whole path kept), else by path prefix (`/<slug>/rest` → `/rest`, the query
 * kept). Slugs compare lower-cased (the platform stores them so). Pure string work on a target already read
 * under the gate's path rule (request-target.ts): no regular expression is built from the host or the path,
 * and `originUrl` is exactly the priced `originPath` and the query, handed to the proxy as is.
 *
 * Defends against: a request reaching a seller it does not name (no default seller; an unknown host or prefix is
 * a 404), a prefix spelled with dot segments or encoded slashes escaping to another seller (the prefix is the
 * first raw segment, compared exactly). Dot segments, encoded separators and backslashes never get here
 * (request-target.ts refuses them).
 */
export interface RoutedRequest {
  slug: string;
  /** How the seller was named: by host, or by path prefix (then `prefix` is `/<slug>`). */
  by: 'host' | 'prefix';
  prefix: string;
  /** The path the origin sees, without the query ("/" at least). */
  originPath: string;
  /** The path and query sent to the origin. */
  originUrl: string;
}

/** The host name without port, lower-cased; undefined for an empty or absurd Host. */
export function hostName(hostHeader: string | undefined): string | undefined {
  if (!hostHeader || hostHeader.length > 300) return undefined;
  const lower = hostHeader.toLowerCase();
  if (lower.startsWith('[')) return undefined; // an IPv6 literal names no seller
  const colon = lower.indexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

export function routeRequest(
  target: { path: string; query: string },
  hostHeader: string | undefined,
  baseDomain: string | undefined,
): RoutedRequest | undefined {
  const { path, query } = target;
  if (baseDomain) {
    const host = hostName(hostHeader);
    const suffix = `.${baseDomain}`;
    if (host && host.endsWith(suffix) && host.length > suffix.length) {
      const slug = host.slice(0, -suffix.length);
      if (!slug.includes('.')) return { slug, by: 'host', prefix: '', originPath: path, originUrl: path + query };
    }
  }
  const second = path.indexOf('/', 1);
  const slug = (second === -1 ? path.slice(1) : path.slice(1, second)).toLowerCase();
  if (slug === '' || slug === '.' || slug === '..' || slug.includes('%')) return undefined;
  const rest = second === -1 ? '/' : path.slice(second);
  return { slug, by: 'prefix', prefix: `/${slug}`, originPath: rest, originUrl: rest + query };
}
