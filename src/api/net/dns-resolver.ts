/**
 * Resolution of tenants' host names over DNS itself (c-ares: node:dns `Resolver`), for the outbound path when only
 * global addresses are allowed (./vetted-fetch.ts).
 *
 * Defends: the API's thread pool and the other tenants' lookups. The system resolver (getaddrinfo) runs on libuv's
 * thread pool and cannot be stopped: a lookup in a zone whose nameserver drops queries holds its thread for the
 * resolver's own timeout, long after its caller gave up. A query through c-ares runs on the event loop's own
 * sockets, holds no pool thread, and is cancelled when the caller's deadline passes (`cancel()` on a resolver of its
 * own), so a dead zone costs one socket for at most one deadline.
 * Does not defend: what a name resolves to (the caller vets every answer: ./address-class.ts); names the system
 * would find elsewhere (/etc/hosts, mDNS) — a global origin has a DNS name, and the local sandbox, where such names
 * matter, keeps the system resolver.
 */
import { Resolver } from 'node:dns/promises';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has; `signal` aborts the lookup (the caller's deadline). */
export type HostResolver = (hostname: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

export interface DnsResolverOptions {
  /** Nameservers (`ip` or `ip:port`); /etc/resolv.conf's when absent. */
  servers?: readonly string[] | undefined;
  /** c-ares' timeout a try (it doubles each retry); the caller's deadline still bounds the whole lookup. */
  tryTimeoutMs?: number | undefined;
  tries?: number | undefined;
}

const DEFAULT_TRY_TIMEOUT_MS = 1_000;
const DEFAULT_TRIES = 2;

/** RFC 6761: `localhost` and its subdomains are the loopback addresses, whatever a nameserver would say. */
const LOOPBACK_ANSWERS: readonly ResolvedAddress[] = Object.freeze([
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
]);
const isLocalhostName = (hostname: string) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};

/** The codes of a name that exists without records of the type asked: the other family may still answer. */
const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * A HostResolver that answers `localhost` names with the loopback addresses and asks A and AAAA over DNS with a resolver of its own for each lookup, cancelled when `signal`
 * aborts. Answers every address either family gave; rejects when neither gave one (the first real error, else the
 * empty answer's).
 */
export function dnsResolver(options: DnsResolverOptions = {}): HostResolver {
  return async (hostname, signal) => {
    if (isLocalhostName(hostname)) return [...LOOPBACK_ANSWERS];
    const resolver = new Resolver({
      timeout: options.tryTimeoutMs ?? DEFAULT_TRY_TIMEOUT_MS,
      tries: options.tries ?? DEFAULT_TRIES,
    });
    if (options.servers) resolver.setServers([...options.servers]);
    const cancel = () => resolver.cancel();
    if (signal?.aborted) throw new Error('lookup aborted');
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const answers: ResolvedAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (answers.length > 0) return answers;
      const failures = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
      throw failures.find((e) => !NO_RECORDS.has(e.code ?? '')) ?? failures[0] ?? new Error('no addresses');
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  };
}
