/**
 * Reports the gate's uptime buckets (./uptime-buckets.ts) to the platform in the background: every
 * `GATE_UPTIME_REPORT_MS`, `POST {api_url}/v1/gate/uptime` with the gate bearer, up to 500 buckets a call, one
 * call at a time; `flush()` sends what is left (at close). A call that fails (network, time-out, 5xx, 429) puts
 * its buckets back for the next round; any other answer is final (the platform refused them, and says why per
 * bucket; those are logged, not retried).
 *
 * Defends against: reporting touching the request path (recording is a map update; sending runs on a timer,
 * never awaited by a request); a platform outage piling up memory (the buckets' own bound). Does not defend
 * against: counts lost at exit after a failed last report.
 */
import { boundedFetchJson, type FetchLike } from '../x402/bounded-fetch.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import { uptimeReportReplySchema } from '../shared/uptime-report-schema.js';
import { UptimeBuckets } from './uptime-buckets.js';
import type { GateConfig } from './gate-config.js';

export interface UptimeReporterOptions {
  apiUrl: string;
  token: string;
  fetch: FetchLike | undefined;
  timeoutMs: number;
  intervalMs: number;
  logger: X402Logger;
}

export class UptimeReporter {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly buckets: UptimeBuckets,
    private readonly options: UptimeReporterOptions,
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** At close: no more rounds, the last one sent (when reporting is on). */
  close(): Promise<void> {
    this.stop();
    return this.options.intervalMs > 0 ? this.flush() : Promise.resolve();
  }

  /** Sends every bucket recorded so far (one round; a failed call keeps its buckets for the next). */
  flush(): Promise<void> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    // At most as many calls as there were buckets at the start: buckets put back wait for the next round.
    let calls = Math.ceil(this.buckets.size / 500);
    while (calls-- > 0 && this.buckets.size > 0) {
      const batch = this.buckets.take();
      if (!(await this.send(batch))) {
        this.buckets.restore(batch);
        return;
      }
    }
  }

  /** One call; false when it should be tried again. */
  private async send(batch: ReturnType<UptimeBuckets['take']>): Promise<boolean> {
    const { apiUrl, token, timeoutMs, logger } = this.options;
    const result = await boundedFetchJson({
      fetch: this.options.fetch,
      method: 'POST',
      url: `${apiUrl}/v1/gate/uptime`,
      headers: { authorization: `Bearer ${token}` },
      body: { buckets: batch },
      timeoutMs,
      maxBytes: 256 * 1024,
    });
    if (result.kind === 'failed' || result.status >= 500 || result.status === 429) {
      logger.warn(
        { cause: result.kind === 'failed' ? result.cause : `HTTP ${result.status}` },
        'gate: uptime report failed; kept',
      );
      return false;
    }
    const reply = uptimeReportReplySchema.safeParse(result.json);
    if (result.status !== 200 || !reply.success)
      logger.warn({ status: result.status, buckets: batch.length }, 'gate: uptime report refused; dropped');
    else if (reply.data.results.some((r) => r.outcome === 'refused'))
      logger.warn(
        { refused: reply.data.results.filter((r) => r.outcome === 'refused').slice(0, 10) },
        'gate: the platform refused some uptime buckets',
      );
    return true;
  }
}

/** The gate's buckets and their reporter (GATE_UPTIME_REPORT_MS apart), with the gate bearer. */
export function createUptime(config: GateConfig, fetch: FetchLike | undefined, logger: X402Logger) {
  const buckets = new UptimeBuckets();
  const reporter = new UptimeReporter(buckets, {
    apiUrl: config.apiUrl,
    token: config.token,
    fetch,
    timeoutMs: config.platformTimeoutMs,
    intervalMs: config.uptimeReportMs,
    logger,
  });
  return { buckets, reporter };
}
