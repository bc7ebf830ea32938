/**
 * GET of a tenant-supplied http(s) URL from the API, for seller origin verification and OpenAPI ingest:
 * the host is resolved once, every address it resolves to is vetted, and the connection is made to the
 * vetted address itself (node:http/https with a `lookup` that answers only that address; Host header
 * and TLS server name stay the URL's host name, so certificates are checked as usual).
 *
 * Defends: server-side request forgery — DNS rebinding between a check and the connection (there is no
 * second resolution), non-global addresses (src/api/net/address-class.ts; refused when any answer is one),
 * ports other than the allowed ones (80 and 443 unless configured), redirects (never followed), unbounded
 * or compressed bodies (identity encoding only, `maxBytes` read at most), slow servers (one deadline over
 * resolution, connection, headers and body), and echo: a refusal is an `OutboundError` with a stable
 * `reason` and nothing of the response (no body, header, status line or Location) in it.
 * `allowPrivate` (the local sandbox and tests) lets non-global addresses through, on any port; a global
 * address still needs an allowed port.
 * Also defends the resolver's thread pool and the other tenants' lookups: without `allowPrivate` a host name is
 * resolved over DNS (./dns-resolver.ts: no pool thread, cancelled at the deadline), at most
 * MAX_DNS_QUERIES_IN_FLIGHT at once; with it (the sandbox: /etc/hosts names) by the system resolver, whose lookups
 * take a slot of a bound of two (./lookup-slots.ts) held until they settle, even after the deadline has answered
 * the caller. A lookup that gets no slot before the deadline never starts (`timeout`).
 * Does not defend: what a global host serves (callers parse it as untrusted), nor a global address that
 * is nonetheless internal (see address-class.ts).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from './address-class.js';
import { dnsResolver, type HostResolver, type ResolvedAddress } from './dns-resolver.js';
import { LookupSlots, processLookupSlots } from './lookup-slots.js';

export type { HostResolver, ResolvedAddress } from './dns-resolver.js';

/** DNS queries of tenants' names at once in this process (each a socket and a timer, for at most one deadline). */
export const MAX_DNS_QUERIES_IN_FLIGHT = 32;
const processDnsQuerySlots = new LookupSlots(MAX_DNS_QUERIES_IN_FLIGHT);
const processDnsResolver = dnsResolver();

/** The system resolver (getaddrinfo on libuv's pool): /etc/hosts names; for the sandbox and tests only. */
export const systemResolver: HostResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export const DEFAULT_OUTBOUND_PORTS: readonly number[] = Object.freeze([80, 443]);

export interface OutboundPolicy {
  /** Let non-global addresses through, on any port (local sandbox and tests only). */
  allowPrivate: boolean;
  /** Ports a global address may be reached on; 80 and 443 by default. */
  allowedPorts?: readonly number[] | undefined;
  /** A resolver of the caller's (tests: a rebinding resolver); else DNS, or the system's with `allowPrivate`. */
  resolveHost?: HostResolver | undefined;
  /** Nameservers for the DNS resolver (`ip` or `ip:port`); /etc/resolv.conf's when absent. */
  dnsServers?: readonly string[] | undefined;
  /** The bound on lookups in flight (./lookup-slots.ts); the process-wide one unless a test brings its own. */
  lookupSlots?: LookupSlots | undefined;
  /** One deadline over resolution, connection, headers and body. */
  timeoutMs?: number | undefined;
  maxBytes: number;
  userAgent?: string | undefined;
}

export type OutboundRefusal =
  | 'scheme_refused'
  | 'port_refused'
  | 'address_refused'
  | 'unresolvable'
  | 'unreachable'
  | 'timeout'
  | 'redirect_refused'
  | 'too_large';

/** A refused or failed outbound request: a stable reason, never anything the remote side sent. */
export class OutboundError extends Error {
  constructor(readonly reason: OutboundRefusal) {
    super(`outbound request refused: ${reason}`);
    this.name = 'OutboundError';
  }
}

export interface VettedResponse {
  status: number;
  /** The body for 2xx answers (at most maxBytes); empty otherwise (never read). */
  body: Buffer;
}

const DEFAULT_TIMEOUT_MS = 5_000;

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Which resolver a policy's lookups use, and which bound they take a slot of. */
function resolverOf(policy: OutboundPolicy): { resolve: HostResolver; slots: LookupSlots } {
  if (policy.resolveHost) return { resolve: policy.resolveHost, slots: policy.lookupSlots ?? processLookupSlots };
  if (policy.dnsServers)
    return { resolve: dnsResolver({ servers: policy.dnsServers }), slots: policy.lookupSlots ?? processDnsQuerySlots };
  if (policy.allowPrivate) return { resolve: systemResolver, slots: policy.lookupSlots ?? processLookupSlots };
  return { resolve: processDnsResolver, slots: policy.lookupSlots ?? processDnsQuerySlots };
}

/**
 * Resolves `hostname` with a lookup slot held until the lookup settles (see ./lookup-slots.ts; a DNS lookup settles
 * at the deadline at the latest, cancelled); refuses with `timeout`, without starting the lookup, when no slot frees
 * before `deadline`.
 */
async function resolveBounded(
  hostname: string,
  policy: OutboundPolicy,
  deadline: AbortSignal,
): Promise<ResolvedAddress[]> {
  const { resolve, slots } = resolverOf(policy);
  const release = await slots.acquire(deadline);
  if (!release || deadline.aborted) {
    release?.();
    throw new OutboundError('timeout');
  }
  const lookup = (async () => resolve(hostname, deadline))(); // a resolver that throws at once still frees its slot
  lookup.then(release, release);
  try {
    return await lookup;
  } catch {
    throw new OutboundError('unresolvable');
  }
}

/** Resolves `hostname` once (an IP literal is its own answer) and vets every address; returns the one to connect to. */
async function vetHost(
  url: URL,
  port: number,
  policy: OutboundPolicy,
  deadline: AbortSignal,
): Promise<ResolvedAddress> {
  const allowedPorts = policy.allowedPorts ?? DEFAULT_OUTBOUND_PORTS;
  const literal = classifyAddress(url.hostname);
  const answers: ResolvedAddress[] =
    literal.range !== 'invalid'
      ? [{ address: literal.address, family: literal.address.includes(':') ? 6 : 4 }]
      : await resolveBounded(url.hostname, policy, deadline);
  if (answers.length === 0) throw new OutboundError('unresolvable');
  const vetted: ResolvedAddress[] = [];
  for (const answer of answers) {
    const cls = classifyAddress(answer.address);
    if (cls.range === 'invalid') throw new OutboundError('unresolvable');
    if (!cls.global && !policy.allowPrivate) throw new OutboundError('address_refused');
    if (cls.global && !allowedPorts.includes(port)) throw new OutboundError('port_refused');
    vetted.push({ address: cls.address, family: cls.address.includes(':') ? 6 : 4 });
  }
  return vetted[0]!;
}

/** A `lookup` for node:net that answers only the vetted address, whatever name it is asked for. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

/** GET `url` under the rules above. Resolves with the status (and the body of a 2xx); rejects with `OutboundError`. */
export async function vettedGet(url: URL, policy: OutboundPolicy): Promise<VettedResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('scheme_refused');
  if (url.username || url.password) throw new OutboundError('scheme_refused');
  const port = portOf(url);
  const allowedPorts = policy.allowedPorts ?? DEFAULT_OUTBOUND_PORTS;
  // Without allowPrivate every address must be global, so a port outside the list is refused before any lookup.
  if (!policy.allowPrivate && !allowedPorts.includes(port)) throw new OutboundError('port_refused');
  const deadline = AbortSignal.timeout(policy.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const pinned = await Promise.race([
    vetHost(url, port, policy, deadline),
    new Promise<never>((_, reject) =>
      deadline.addEventListener('abort', () => reject(new OutboundError('timeout')), { once: true }),
    ),
  ]);
  if (deadline.aborted) throw new OutboundError('timeout');
  return new Promise<VettedResponse>((resolve, reject) => {
    let settled = false;
    const fail = (reason: OutboundRefusal) => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(new OutboundError(reason));
    };
    const options: https.RequestOptions = {
      method: 'GET',
      agent: false, // no pooled socket: each request connects to its own vetted address
      lookup: pinnedLookup(pinned),
      headers: {
        'user-agent': policy.userAgent ?? 'treasury-outbound/1',
        accept: '*/*',
        'accept-encoding': 'identity',
        connection: 'close',
      },
    };
    // TLS checks the certificate against the URL's host name (an IP literal sends no SNI).
    if (url.protocol === 'https:' && !url.hostname.startsWith('[') && classifyAddress(url.hostname).range === 'invalid')
      options.servername = url.hostname;
    const req = url.protocol === 'https:' ? https.request(url, options) : http.request(url, options);
    const onAbort = () => fail('timeout');
    deadline.addEventListener('abort', onAbort, { once: true });
    req.on('error', () => fail(deadline.aborted ? 'timeout' : 'unreachable'));
    req.on('close', () => deadline.removeEventListener('abort', onAbort));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) return fail('redirect_refused');
      if (status < 200 || status >= 300) {
        settled = true;
        req.destroy();
        return resolve({ status, body: Buffer.alloc(0) });
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > policy.maxBytes) return fail('too_large');
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > policy.maxBytes) return fail('too_large');
        chunks.push(chunk);
      });
      res.on('error', () => fail(deadline.aborted ? 'timeout' : 'unreachable'));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        resolve({ status, body: Buffer.concat(chunks) });
      });
    });
    req.end();
  });
}
