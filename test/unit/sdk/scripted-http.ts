/**
 * A scripted HTTP server on loopback for the SDK's unit tests (a fake Treasury or a fake seller): each
 * request is recorded (method, url, headers, body) and answered by the test's handler (or its connection
 * closed unanswered), which may be swapped between calls. Also the canned Treasury replies (wallet view, signed payment) the SDK schemas accept.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buyer } from '../x402/x402-fixtures.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ScriptedReply {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Close the connection instead of answering (the request was read: an answer lost on the way back). */
  drop?: boolean;
}

export type ScriptedHandler = (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  handler: ScriptedHandler;
  close(): Promise<void>;
}

export async function scriptedServer(handler: ScriptedHandler): Promise<ScriptedServer> {
  const state: ScriptedServer = { url: '', requests: [], handler, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      state.requests.push(recorded);
      Promise.resolve()
        .then(() => state.handler(recorded))
        .then(
          (r) => {
            if (r.drop) {
              res.socket?.destroy();
              return;
            }
            const text = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
            res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
            res.end(text);
          },
          (err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(String(err));
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

export const WALLET_ID = 'wal_0123456789abcdef01234567';

export const WALLET = {
  id: WALLET_ID,
  account_id: 'acct_1',
  label: null,
  chain: 'base-sepolia',
  network: 'eip155:84532',
  address: buyer.address,
  policy: null,
  status: 'active',
  key_version: 1,
  created_at: '2026-11-23T00:00:00.000Z',
  updated_at: '2026-11-23T00:00:00.000Z',
  revoked_at: null,
};

export const NONCE = `0x${'ab'.repeat(32)}`;

/** What Treasury's pay endpoint answers for `r` (the signature is a placeholder; sellers here do not verify). */
export function signedFor(r: Pick<PaymentRequirements, 'payTo' | 'amount' | 'asset' | 'network'>) {
  return {
    authorization: {
      from: buyer.address,
      to: r.payTo,
      value: r.amount,
      validAfter: '0',
      validBefore: '9999999999',
      nonce: NONCE,
    },
    signature: `0x${'11'.repeat(65)}`,
    authorization_id: 'auth_1',
    decision_id: 'pd_1',
    wallet_id: WALLET_ID,
    network: r.network,
    asset: r.asset,
    amount_usd: '0.01',
  };
}

/** A fake Treasury: GET wallet answers WALLET, POST pay signs the requested entry; override with `reply`. */
export function fakeTreasuryHandler(reply?: (req: RecordedRequest) => ScriptedReply | undefined): ScriptedHandler {
  return (req) => {
    const custom = reply?.(req);
    if (custom) return custom;
    if (req.method === 'GET' && req.url === `/v1/wallets/${WALLET_ID}`) return { status: 200, body: WALLET };
    if (req.method === 'POST' && req.url === `/v1/wallets/${WALLET_ID}/pay`)
      return { status: 200, body: signedFor(JSON.parse(req.body).payment_requirements) };
    return { status: 404, body: { error_code: 'not_found', user_message: 'Not found.' } };
  };
}
