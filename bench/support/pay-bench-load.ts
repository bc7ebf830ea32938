/**
 * The load `npm run bench` pays with: one keep-alive client (./keep-alive-load-client.ts: fixed requests over
 * `connections` sockets, cheaper for the load generator than node:http, which shares the two cores with what it
 * measures) sending the same pay body, each payment under an Idempotency-Key of its own made as the SDK's
 * TreasuryAccount makes it (unless told not to), and every answer other than 200 counted by phase and status, with
 * its error code.
 *
 * Limits: `phase` is whatever the bench set last (a failure is counted under the phase running when it answered);
 * an error code is read from the answer's body by its `error_code` field only.
 */
import { KeepAliveLoadClient } from './keep-alive-load-client.js';
import { newIdempotencyKey } from '../../src/sdk/new-idempotency-key.js';

export class PayLoad {
  /** The phase the answers are counted under. */
  phase = 'warm-up';
  /** Answers other than 200, by phase and status (0: the connection failed before an answer). */
  readonly failures = new Map<string, number>();
  /** Error codes of the answers other than 200, by phase and status (each code counted). */
  readonly failureCodes = new Map<string, Map<string, number>>();
  readonly client: KeepAliveLoadClient;
  /** The pay request's body and headers (the bench's API key as bearer). */
  readonly payload: Buffer;
  readonly headers: Record<string, string>;
  /** One payment from a wallet through the bench's client: true on 200. */
  readonly payOnce: (walletId: string) => Promise<boolean>;
  private bearerHeaders: Record<string, string>;
  private readonly headersFor: () => Record<string, string>;

  constructor(o: {
    port: number;
    connections: number;
    apiKey: string;
    payBody: unknown;
    /** An Idempotency-Key of its own on each payment (false: none). */
    idempotencyKeys: boolean;
  }) {
    this.client = new KeepAliveLoadClient({
      host: '127.0.0.1',
      port: o.port,
      connections: o.connections,
      onFailedAnswer: (status, body) => {
        const key = `${this.phase} ${status}`;
        const code = /"error_code":"([a-z0-9_]{1,64})"/.exec(body)?.[1] ?? 'no code';
        const codes = this.failureCodes.get(key) ?? new Map<string, number>();
        codes.set(code, (codes.get(code) ?? 0) + 1);
        this.failureCodes.set(key, codes);
      },
    });
    this.payload = Buffer.from(JSON.stringify(o.payBody));
    this.headers = { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' };
    this.bearerHeaders = this.headers;
    this.headersFor = o.idempotencyKeys
      ? () => ({ ...this.bearerHeaders, 'idempotency-key': newIdempotencyKey('account') })
      : () => this.bearerHeaders;
    this.payOnce = this.payThrough(this.client, '');
  }

  /** One payment from a wallet through `via`, its failures counted under the phase followed by `suffix`. */
  payThrough(via: KeepAliveLoadClient, suffix: string) {
    return async (walletId: string): Promise<boolean> => {
      const status = await via.request('POST', `/v1/wallets/${walletId}/pay`, this.headersFor(), this.payload);
      const key = `${this.phase}${suffix} ${status}`;
      if (status !== 200) this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
      return status === 200;
    };
  }

  /** The loop op paying over many wallets: the i-th payment from a stride through the list. */
  spread(walletIds: readonly string[]): (i: number) => Promise<boolean> {
    return (i) => this.payOnce(walletIds[(i * 7919) % walletIds.length]!);
  }

  /** Pays from now on with `bearer` (e.g. an agent's PAT) instead of the API key. */
  useBearer(bearer: string): void {
    this.bearerHeaders = { ...this.headers, authorization: `Bearer ${bearer}` };
  }

  close(): void {
    this.client.close();
  }
}
