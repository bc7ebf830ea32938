/**
 * The gate proves its public address (GATE_PUBLIC_URL; docs/gate.md#the-gates-public-address) so the platform
 * lists its sellers in discovery there: it names the address to the platform (`POST /v1/gate/address`, the gate
 * bearer), with its GATE_BASE_DOMAIN when it has one, keeps the token the platform answers (the account's), serves
 * it at `/.well-known/xx-gate-verification.txt` (gate-server.ts: on any `*.<GATE_BASE_DOMAIN>` host too), then asks
 * the platform to fetch that file from the address and, with a base domain, from a random name under it
 * (`POST /v1/gate/address/verify`). An attempt that fails (platform away, the address not reachable yet) is tried
 * again every GATE_REFRESH_MS until one proves all it named; once the URL is proven and only the base domain is not
 * (no wildcard record yet, or none meant), the wait doubles from attempt to attempt up to an hour
 * (`domainRetryDelayMs`), so a domain that never answers costs the platform two fetches an hour, not two every
 * GATE_REFRESH_MS; nothing here touches a buyer's request.
 *
 * A proof does not last forever: the platform fetches it again on its own schedule and withdraws it when the file no
 * longer serves the token (src/api/sellers/proofs/). So once all it named is proven the gate asks again every hour
 * (`PROOF_RECHECK_MS`): naming the address answers the platform's view with its `verified_at` (and
 * `base_domain_verified_at`); while they are still set nothing more is done (no verify call, no platform fetch);
 * when the platform withdrew one the gate proves it again, as at its first start.
 *
 * Defends against: serving a token the platform did not issue (only the platform's reply, parsed with the shared
 * schema, sets it); the bearer in a log line; a gate that stays unlisted after the platform withdrew its proof
 * (it proves again within the hour). Does not defend against: a GATE_PUBLIC_URL that routes to another
 * process — the platform's fetch then fails and the sellers stay unlisted, which is the point.
 */
import { boundedFetchJson, type FetchLike } from '../x402/bounded-fetch.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import type { z } from 'zod';
import { gateAddressViewSchema } from '../shared/gate-address-schema.js';
import type { GateConfig } from './gate-config.js';

export interface GateAddressProofOptions {
  publicUrl: string;
  /** GATE_NETWORK: the catalogue lists the gate's sellers on this network only. */
  network: string;
  /** GATE_BASE_DOMAIN: proven too, so buyers paying through Treasury may buy at `<slug>.<domain>`. */
  baseDomain: string | undefined;
  apiUrl: string;
  token: string;
  fetch: FetchLike | undefined;
  timeoutMs: number;
  retryMs: number;
  /** How often a proven address is asked about again (PROOF_RECHECK_MS unless a test says otherwise). */
  recheckMs?: number;
  logger: X402Logger;
}

/** The longest wait between attempts while only the base domain is unproven. */
export const MAX_DOMAIN_RETRY_MS = 3_600_000;

/** The wait before asking the platform whether a proven address (and base domain) is still proven. */
export const PROOF_RECHECK_MS = 3_600_000;

/**
 * The wait before the next attempt after `misses` attempts in a row proved the URL and not the base domain: GATE_REFRESH_MS
 * (`retryMs`) doubled for each miss after the first, at most MAX_DOMAIN_RETRY_MS (never less than `retryMs`).
 */
export function domainRetryDelayMs(retryMs: number, misses: number): number {
  const doubled = retryMs * 2 ** Math.min(Math.max(misses - 1, 0), 32);
  return Math.max(retryMs, Math.min(doubled, MAX_DOMAIN_RETRY_MS));
}

/** The platform's view; one that predates base domains (no `base_domain*` fields) is read as naming none. */
const platformView = gateAddressViewSchema.partial({ base_domain: true, base_domain_verified_at: true });
type PlatformView = z.infer<typeof platformView>;

export class GateAddressProof {
  /** The token to serve; undefined until the platform issued it. */
  token: string | undefined;
  /** The last view with the URL verified (its base domain's proof may still be pending). */
  verified: PlatformView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Attempts in a row that proved the URL and not the base domain. */
  private domainMisses = 0;

  constructor(private readonly options: GateAddressProofOptions) {}

  /** The first attempt, once started (retries follow on a timer until one succeeds). */
  first: Promise<void> = Promise.resolve();

  /** Starts proving; resolves after the first attempt. */
  start(): Promise<void> {
    this.stopped = false;
    this.first = this.attempt();
    return this.first;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Whether `view` has all this gate names proven: the URL and, with a base domain, the domain. */
  private allProven(view: PlatformView): boolean {
    return Boolean(view.verified_at && (this.options.baseDomain === undefined || view.base_domain_verified_at));
  }

  /**
   * One attempt: name the address (learning the token and whether it is still proven); unless all it names is still
   * proven, have the platform verify it. When all is proven the next attempt is in `recheckMs`; a URL verified alone
   * is kept (`verified`) and tried again.
   */
  async attempt(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const { publicUrl: url, network, baseDomain } = this.options;
    const named = await this.call('/v1/gate/address', {
      url,
      network,
      ...(baseDomain !== undefined ? { base_domain: baseDomain } : {}),
    });
    if (named) this.token = named.token;
    // The platform says the URL is unproven (never proven, or withdrawn): no stale proven view is kept.
    if (named && !named.verified_at) this.verified = undefined;
    if (named && this.allProven(named)) {
      // Still proven: nothing to fetch; ask again later.
      this.verified = named;
      this.domainMisses = 0;
      return this.later(this.options.recheckMs ?? PROOF_RECHECK_MS);
    }
    const proven = named ? await this.call('/v1/gate/address/verify', undefined) : undefined;
    let delay = this.options.retryMs;
    if (proven?.verified_at) {
      this.verified = proven;
      if (this.allProven(proven)) {
        this.domainMisses = 0;
        this.options.logger.info(
          { url: proven.url, base_domain: proven.base_domain ?? undefined },
          'gate: public address verified',
        );
        return this.later(this.options.recheckMs ?? PROOF_RECHECK_MS);
      }
      delay = domainRetryDelayMs(this.options.retryMs, ++this.domainMisses);
      this.options.logger.warn(
        { url: proven.url, base_domain: baseDomain, code: proven.base_domain_error, retry_in_ms: delay },
        'gate: public address verified, base domain not proven; retrying',
      );
    }
    this.later(delay);
  }

  /** The next attempt in `delay` ms (none once stopped). */
  private later(delay: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), delay);
    this.timer.unref();
  }

  private async call(path: string, body: unknown): Promise<PlatformView | undefined> {
    const { apiUrl, token, timeoutMs, logger } = this.options;
    const result = await boundedFetchJson({
      fetch: this.options.fetch,
      method: 'POST',
      url: `${apiUrl}${path}`,
      headers: { authorization: `Bearer ${token}` },
      ...(body !== undefined ? { body } : {}),
      timeoutMs,
      maxBytes: 16 * 1024,
    });
    if (result.kind === 'failed') {
      logger.warn({ path, cause: result.cause }, 'gate: public address call failed; retrying');
      return undefined;
    }
    const view = platformView.safeParse(result.json);
    if (result.status === 200 && view.success) return view.data;
    const code = (result.json as { error_code?: unknown } | undefined)?.error_code;
    logger.warn(
      { path, status: result.status, code: typeof code === 'string' ? code.slice(0, 64) : undefined },
      'gate: public address refused; retrying',
    );
    return undefined;
  }
}

/** The proof of GATE_PUBLIC_URL with the gate bearer, retried every GATE_REFRESH_MS; none without the variable. */
export function createAddressProof(
  config: GateConfig,
  fetch: FetchLike | undefined,
  logger: X402Logger,
): GateAddressProof | undefined {
  if (!config.publicUrl) return undefined;
  return new GateAddressProof({
    publicUrl: config.publicUrl,
    network: config.network,
    baseDomain: config.baseDomain,
    apiUrl: config.apiUrl,
    token: config.token,
    fetch,
    timeoutMs: config.platformTimeoutMs,
    retryMs: config.refreshMs,
    logger,
  });
}
