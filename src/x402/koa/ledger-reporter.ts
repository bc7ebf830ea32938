/**
 * Best-effort ledger reports (`POST {api_url}/v1/ledger`, body `ledgerReportBodySchema`) after a settlement.
 * Reports are sent in the background — the buyer's response never waits for them — with a bounded number of
 * retries on network errors, 5xx and 429; a 4xx other than 429 is final. At most `maxPending` reports are
 * queued; beyond that new ones are dropped (counted).
 *
 * Defends against: a platform outage failing, delaying or piling up the seller's paid traffic.
 * Does not defend against: losing reports across a process exit or after the retries are exhausted — the
 * chain holds every settled transfer, and the platform's ledger is idempotent on tx_hash, so a later
 * reconciliation can fill gaps.
 */
import { ledgerReportBodySchema } from '../../http/schemas/seller-schemas.js';
import { boundedFetchJson, type FetchLike } from '../bounded-fetch.js';
import type { X402Logger } from './koa-options.js';
import type { X402MiddlewareMetrics } from './middleware-metrics.js';

export interface LedgerRow {
  tx_hash: string;
  payer: string;
  amount: string;
  network: string;
  endpoint_id?: string | undefined;
  method?: string | undefined;
  route?: string | undefined;
  content_hash?: string | undefined;
  nonce?: string | undefined;
}

export interface LedgerReporterOptions {
  apiUrl: string;
  token: string;
  fetch: FetchLike;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  metrics: X402MiddlewareMetrics;
  logger: X402Logger;
  maxPending?: number;
}

const ROUTE_RE = /^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/{}]*$/;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export class LedgerReporter {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: LedgerReporterOptions) {}

  /** Queues a report; returns at once. Optional fields the platform would refuse are left out. */
  report(row: LedgerRow): void {
    const body: Record<string, string> = { tx_hash: row.tx_hash, payer: row.payer, amount: row.amount, network: row.network };
    if (row.endpoint_id) body.endpoint_id = row.endpoint_id;
    if (row.method && METHODS.has(row.method)) body.method = row.method;
    if (row.route && row.route.length <= 512 && ROUTE_RE.test(row.route)) body.route = row.route;
    if (row.content_hash) body.content_hash = row.content_hash;
    if (row.nonce) body.nonce = row.nonce;
    const parsed = ledgerReportBodySchema.safeParse(body);
    if (!parsed.success) {
      this.options.metrics.ledgerReports.inc({ outcome: 'invalid' });
      this.options.logger.warn({ issues: parsed.error.issues.map((i) => i.path.join('.')) }, 'x402 middleware: ledger report not sent (invalid row)');
      return;
    }
    if (this.pending.size >= (this.options.maxPending ?? 1000)) {
      this.options.metrics.ledgerReports.inc({ outcome: 'dropped' });
      this.options.logger.warn({ tx_hash: body.tx_hash }, 'x402 middleware: ledger report dropped (queue full)');
      return;
    }
    const task = this.send(body).finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  /** Resolves when every queued report has finished (sent, refused or given up). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async send(body: Record<string, string>): Promise<void> {
    const { retryDelaysMs, metrics, logger } = this.options;
    let lastCause = '';
    for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
      if (attempt > 0) await sleep(retryDelaysMs[attempt - 1]!);
      const result = await boundedFetchJson({
        fetch: this.options.fetch,
        method: 'POST',
        url: `${this.options.apiUrl}/v1/ledger`,
        body,
        headers: { authorization: `Bearer ${this.options.token}` },
        timeoutMs: this.options.timeoutMs,
      });
      if (result.kind === 'reply' && result.status >= 200 && result.status < 300) {
        metrics.ledgerReports.inc({ outcome: result.status === 201 ? 'sent' : 'duplicate' });
        return;
      }
      if (result.kind === 'reply' && result.status < 500 && result.status !== 429) {
        metrics.ledgerReports.inc({ outcome: 'rejected' });
        logger.warn({ status: result.status, tx_hash: body.tx_hash }, 'x402 middleware: the platform refused a ledger report');
        return;
      }
      lastCause = result.kind === 'failed' ? result.cause : `HTTP ${result.status}`;
    }
    metrics.ledgerReports.inc({ outcome: 'failed' });
    logger.warn({ cause: lastCause, tx_hash: body.tx_hash }, 'x402 middleware: ledger report failed after retries');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
