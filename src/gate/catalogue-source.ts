/**
 * Where the gate learns what it sells: `GET {api_url}/v1/gate/catalogue` with the gate bearer, parsed with the
 * platform's own schema (src/shared/api-responses/gate-responses.ts), read at start and again every
 * `refreshMs`, and turned into the seller table (seller-table.ts) the router reads.
 *
 * A read that fails (platform down, 401/403, a reply of another shape) keeps the last good table and is logged
 * with its cause; until the first good read the gate is not ready (`table` is undefined: 503 `gate_not_ready`).
 * Reads never overlap; `refreshNow()` reads at once (tests, and a seller that just changed its prices).
 *
 * Defends against: a platform outage or a malformed reply turning the gate into a free proxy or an empty one
 * (the last good catalogue stays); an unbounded reply (4 MiB cap, bounded-fetch.ts). Does not defend against:
 * a price change taking up to `refreshMs` to reach the gate.
 */
import { gateCatalogueSchema } from '../shared/api-responses/gate-responses.js';
import { boundedFetchJson, type FetchLike } from '../x402/bounded-fetch.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import type { GateConfig } from './gate-config.js';
import { buildSellerTable, type SellerTable } from './seller-table.js';
import type { FacilitatorClient } from '../x402/facilitator-client.js';
import type { GateMetrics } from './gate-metrics.js';

export class CatalogueSource {
  private current: SellerTable | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private stopped = false;

  constructor(
    private readonly config: GateConfig,
    private readonly logger: X402Logger,
    private readonly metrics: GateMetrics | undefined,
    private readonly fetchFn?: FetchLike,
    /** The Solana facilitator (GATE_SOLANA_FACILITATOR_URL): sellers with a Solana pay-to are sold there too. */
    private readonly solanaFacilitator?: FacilitatorClient,
  ) {}

  /** The table of the last good read, or undefined before the first. */
  get table(): SellerTable | undefined {
    return this.current;
  }

  /** Reads now, then every `refreshMs` (a failed first read retries within a second). */
  start(): Promise<boolean> {
    const first = this.refreshNow();
    void first.then(() => this.schedule());
    return first;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One read (shared with a read already under way); true when it replaced the table. */
  refreshNow(): Promise<boolean> {
    this.inFlight ??= this.read().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private schedule(): void {
    if (this.stopped) return;
    const delay = this.current ? this.config.refreshMs : Math.min(1_000, this.config.refreshMs);
    this.timer = setTimeout(() => {
      void this.refreshNow().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  private async read(): Promise<boolean> {
    const result = await boundedFetchJson({
      fetch: this.fetchFn,
      method: 'GET',
      url: `${this.config.apiUrl}/v1/gate/catalogue?network=${encodeURIComponent(this.config.network)}`,
      headers: { authorization: `Bearer ${this.config.token}` },
      timeoutMs: this.config.platformTimeoutMs,
      maxBytes: 4 * 1024 * 1024,
    });
    if (result.kind === 'failed') return this.keep(result.cause);
    if (result.status !== 200) {
      const code =
        result.json && typeof result.json === 'object'
          ? String((result.json as { error_code?: unknown }).error_code ?? '')
          : '';
      return this.keep(`HTTP ${result.status}${code ? ` ${code}` : ''}`);
    }
    const parsed = gateCatalogueSchema.safeParse(result.json);
    if (!parsed.success)
      return this.keep(`malformed catalogue (${parsed.error.issues.map((i) => i.path.join('.')).join(', ')})`);
    const table = buildSellerTable(
      this.config,
      parsed.data,
      (fields) => this.logger.warn(fields, 'gate: a seller or endpoint cannot be sold'),
      this.solanaFacilitator && { facilitator: this.solanaFacilitator, logger: this.logger },
    );
    const first = this.current === undefined;
    this.current = table;
    this.metrics?.catalogueReads.inc({ outcome: 'ok' });
    this.logger[first ? 'info' : 'debug'](
      { sellers: table.sellers, endpoints: table.endpoints },
      'gate: catalogue loaded',
    );
    return true;
  }

  private keep(cause: string): false {
    this.metrics?.catalogueReads.inc({ outcome: 'failed' });
    this.logger.warn(
      { cause, kept: this.current !== undefined },
      this.current
        ? 'gate: catalogue read failed; keeping the last good one'
        : 'gate: catalogue read failed; not ready yet',
    );
    return false;
  }
}
