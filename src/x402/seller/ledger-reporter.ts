/**
 * Best-effort ledger reports after a settlement, batched: rows are queued and sent to the platform as
 * `POST {api_url}/v1/ledger/batch` (`{rows}`, up to 100 per call, at most 2 calls in flight), so a busy seller
 * pays one platform round trip per batch rather than per payment. Rows are gathered for up to 50 ms before a
 * partial batch goes out. A platform without the batch route (404/405) gets single-row `POST /v1/ledger`
 * calls instead. The buyer's response never waits for a report. Network errors, 5xx and 429 are retried a
 * bounded number of times; any other 4xx is final. At most `maxPending` rows are queued or in flight; beyond
 * that new ones are dropped (counted).
 *
 * Rows are checked against the platform's own schema (src/shared/ledger-report-schema.ts) when the platform
 * refuses a call, not before each is queued: a row built from a settled payment passes it, and the check cost
 * about 5 µs a paid request, 2 % of the middleware's CPU on its paid path. A refused batch's malformed rows are
 * then left out (counted `invalid`) and the others sent once more, so one malformed row never costs the rest.
 *
 * Defends against: a platform outage failing, delaying or piling up the seller's paid traffic; a busy seller
 * spending more CPU on reporting than on serving.
 * Does not defend against: losing reports across a process exit or after the retries are exhausted — the
 * chain holds every settled transfer, and the platform's ledger is idempotent on tx_hash, so a later
 * reconciliation can fill gaps.
 */
import { z } from 'zod';
import { ledgerReportBodySchema, MAX_LEDGER_BATCH_ROWS as MAX_BATCH_ROWS } from '../../shared/ledger-report-schema.js';
import { boundedFetchJson, type FetchLike } from '../bounded-fetch.js';
import type { X402Logger } from './x402-koa-options.js';
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
  fetch: FetchLike | undefined;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  metrics: X402MiddlewareMetrics;
  logger: X402Logger;
  /** Rows queued or in flight before new ones are dropped; default 10,000. */
  maxPending?: number;
  /** Rows per batch call (1–100); default 100. */
  batchSize?: number;
  /** Batch calls in flight at once; default 2. */
  maxInFlight?: number;
  /** How long rows are gathered before a partial batch goes out; default 50 ms (a busy seller sends fuller batches: fewer calls per row). */
  lingerMs?: number;
  /** The platform routes reports go to; default `/v1/ledger/batch` and `/v1/ledger` (the gate: `/v1/gate/ledger…`). */
  routes?: { batch: string; single: string };
}

const ROUTE_RE = /^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/{}]*$/;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

type ReportBody = Record<string, string>;
type RowOutcome = 'sent' | 'duplicate' | 'rejected' | 'failed' | 'invalid';

const batchReplySchema = z.object({
  results: z.array(
    z.object({
      tx_hash: z.string(),
      outcome: z.enum(['created', 'duplicate', 'rejected']),
      error_code: z.string().optional(),
    }),
  ),
});

export class LedgerReporter {
  private readonly queue: ReportBody[] = [];
  private inFlightRows = 0;
  private inFlightCalls = 0;
  private lingerTimer: NodeJS.Timeout | undefined;
  private batchRoute = true;
  private idleWaiters: Array<() => void> = [];
  private readonly maxPending: number;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private readonly lingerMs: number;

  constructor(private readonly options: LedgerReporterOptions) {
    this.maxPending = options.maxPending ?? 10_000;
    this.batchSize = Math.max(1, Math.min(options.batchSize ?? MAX_BATCH_ROWS, MAX_BATCH_ROWS));
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.lingerMs = Math.max(0, options.lingerMs ?? 50);
  }

  /**
   * Queues a report; returns at once. Optional fields the platform would refuse are left out; the row is checked
   * whole only if the platform refuses it (`malformed`).
   */
  report(row: LedgerRow): void {
    const body: ReportBody = { tx_hash: row.tx_hash, payer: row.payer, amount: row.amount, network: row.network };
    if (row.endpoint_id) body.endpoint_id = row.endpoint_id;
    if (row.method && METHODS.has(row.method)) body.method = row.method;
    if (row.route && row.route.length <= 512 && ROUTE_RE.test(row.route)) body.route = row.route;
    if (row.content_hash) body.content_hash = row.content_hash;
    if (row.nonce) body.nonce = row.nonce;
    if (this.queue.length + this.inFlightRows >= this.maxPending) {
      this.options.metrics.ledgerReports.inc({ outcome: 'dropped' });
      this.options.logger.warn({ tx_hash: body.tx_hash }, 'x402 middleware: ledger report dropped (queue full)');
      return;
    }
    this.queue.push(body);
    this.scheduleDrain();
  }

  /** Rows queued or being sent. */
  get pending(): number {
    return this.queue.length + this.inFlightRows;
  }

  /** Resolves when every queued report has finished (sent, refused or given up). */
  async flush(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Rows are gathered for up to `lingerMs` (or until a full batch is waiting) before a call goes out, so a
   * busy seller sends full batches and an idle one still reports within a moment.
   */
  private scheduleDrain(): void {
    if (this.inFlightCalls >= this.maxInFlight) return;
    if (this.queue.length >= this.batchSize) {
      if (this.lingerTimer) clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
      this.drain();
      return;
    }
    if (this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      this.drain();
    }, this.lingerMs);
  }

  private drain(): void {
    while (this.queue.length > 0 && this.inFlightCalls < this.maxInFlight) {
      const rows = this.queue.splice(0, this.batchSize);
      this.inFlightCalls++;
      this.inFlightRows += rows.length;
      void this.sendRows(rows).finally(() => {
        this.inFlightCalls--;
        this.inFlightRows -= rows.length;
        if (this.queue.length > 0) this.scheduleDrain();
        else if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
    }
  }

  private count(outcome: RowOutcome, n = 1): void {
    if (n > 0) this.options.metrics.ledgerReports.inc({ outcome }, n);
  }

  /** Whether `row` breaks the platform's schema: counted `invalid` and logged (which fields) if it does. */
  private malformed(row: ReportBody): boolean {
    const parsed = ledgerReportBodySchema.safeParse(row);
    if (parsed.success) return false;
    this.count('invalid');
    this.options.logger.warn(
      { issues: parsed.error.issues.map((i) => i.path.join('.')) },
      'x402 middleware: ledger report not sent (invalid row)',
    );
    return true;
  }

  /** Sends `rows` (`checked`: their malformed ones already left out). */
  private async sendRows(rows: ReportBody[], checked = false): Promise<void> {
    if (this.batchRoute) {
      const handled = await this.sendBatch(rows, checked);
      if (handled) return;
    }
    for (const row of rows) await this.sendOne(row);
  }

  /**
   * One batch call with retries; false when the platform has no batch route (the caller falls back). A refused
   * batch that was not `checked` yet is sent again without its malformed rows, if it had any.
   */
  private async sendBatch(rows: ReportBody[], checked = false): Promise<boolean> {
    const { retryDelaysMs, logger } = this.options;
    let lastCause = '';
    for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
      if (attempt > 0) await sleep(retryDelaysMs[attempt - 1]!);
      const result = await this.post(this.options.routes?.batch ?? '/v1/ledger/batch', { rows });
      if (result.kind === 'reply' && (result.status === 404 || result.status === 405)) {
        this.batchRoute = false;
        logger.info(
          { status: result.status },
          'x402 middleware: the platform has no batch ledger route; reporting row by row',
        );
        return false;
      }
      if (result.kind === 'reply' && result.status >= 200 && result.status < 300) {
        const reply = batchReplySchema.safeParse(result.json);
        if (!reply.success || reply.data.results.length !== rows.length) {
          this.count('failed', rows.length);
          logger.warn(
            { status: result.status, rows: rows.length },
            'x402 middleware: malformed reply to a ledger batch',
          );
          return true;
        }
        let sent = 0;
        let duplicate = 0;
        for (const r of reply.data.results) {
          if (r.outcome === 'created') sent++;
          else if (r.outcome === 'duplicate') duplicate++;
          else {
            this.count('rejected');
            logger.warn(
              { tx_hash: r.tx_hash, error_code: r.error_code },
              'x402 middleware: the platform refused a ledger report',
            );
          }
        }
        this.count('sent', sent);
        this.count('duplicate', duplicate);
        return true;
      }
      if (result.kind === 'reply' && result.status < 500 && result.status !== 429) {
        const wellFormed = checked ? rows : rows.filter((row) => !this.malformed(row));
        if (wellFormed.length < rows.length) {
          if (wellFormed.length > 0) await this.sendRows(wellFormed, true);
          return true;
        }
        this.count('rejected', rows.length);
        logger.warn(
          { status: result.status, rows: rows.length },
          'x402 middleware: the platform refused a ledger batch',
        );
        return true;
      }
      lastCause = result.kind === 'failed' ? result.cause : `HTTP ${result.status}`;
    }
    this.count('failed', rows.length);
    logger.warn({ cause: lastCause, rows: rows.length }, 'x402 middleware: ledger batch failed after retries');
    return true;
  }

  private async sendOne(body: ReportBody): Promise<void> {
    const { retryDelaysMs, logger } = this.options;
    let lastCause = '';
    for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
      if (attempt > 0) await sleep(retryDelaysMs[attempt - 1]!);
      const result = await this.post(this.options.routes?.single ?? '/v1/ledger', body);
      if (result.kind === 'reply' && result.status >= 200 && result.status < 300) {
        this.count(result.status === 201 ? 'sent' : 'duplicate');
        return;
      }
      if (result.kind === 'reply' && result.status < 500 && result.status !== 429) {
        if (this.malformed(body)) return;
        this.count('rejected');
        logger.warn(
          { status: result.status, tx_hash: body.tx_hash },
          'x402 middleware: the platform refused a ledger report',
        );
        return;
      }
      lastCause = result.kind === 'failed' ? result.cause : `HTTP ${result.status}`;
    }
    this.count('failed');
    logger.warn({ cause: lastCause, tx_hash: body.tx_hash }, 'x402 middleware: ledger report failed after retries');
  }

  private post(path: string, body: unknown) {
    return boundedFetchJson({
      fetch: this.options.fetch,
      method: 'POST',
      url: `${this.options.apiUrl}${path}`,
      body,
      headers: { authorization: `Bearer ${this.options.token}` },
      timeoutMs: this.options.timeoutMs,
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
