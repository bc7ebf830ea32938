/**
 * The local Solana chain's JSON-RPC 2.0 endpoint: POST / (one request or a batch of at most
 * MAX_BATCH), answered by solana-rpc-methods.ts over one LocalSvm; GET /health → `ok` as a validator does.
 * u64 values are written as JSON numbers (kit's RPC client reads them back as bigints).
 * Defends against: being reached from off the machine (it binds 127.0.0.1 and refuses any other host),
 * oversized bodies (413, 64 KiB), non-JSON bodies (-32700), malformed envelopes (-32600), unknown methods
 * (-32601), bad params (-32602); internal errors are answered -32603 without their text.
 * Does not: authenticate callers or rate-limit them (anyone on the machine can use the chain and its
 * airdrop); it holds no real value and must stay a development tool.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import type { LocalSvm } from './local-svm.js';
import { callRpcMethod } from './solana-rpc-methods.js';
import { isRpcMethodName, jsonRpcRequestSchema } from './solana-rpc-schemas.js';
import {
  RPC_INTERNAL_ERROR,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  SolanaRpcError,
} from './solana-rpc-error.js';
import { assertLoopbackHost } from './loopback-host.js';
import { HttpBodyError, listenOnLoopback, readJsonBody, type LoopbackServer } from '../sandbox/chain/sandbox-http.js';

const MAX_BATCH = 16;

export interface StartSolanaRpcOptions {
  svm: LocalSvm;
  /** Port on 127.0.0.1 (default: any free port). */
  port?: number;
  /** Must be 127.0.0.1 (the default); anything else is refused. */
  host?: string;
  logger: Logger;
}

type JsonRpcId = string | number | null;
type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId; error: { code: number; message: string; data?: unknown } };

function rpcError(id: JsonRpcId, err: SolanaRpcError): JsonRpcResponse {
  const error = { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) };
  return { jsonrpc: '2.0', id, error };
}

/** JSON with bigints written as numbers: each bigint becomes `{"$n":"<digits>"}`, then that object is unwrapped
 * (a string value cannot produce it: its quotes are escaped). */
export function stringifyWithBigInts(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { $n: v.toString() } : v));
  return text.replace(/\{"\$n":"(-?\d+)"\}/g, '$1');
}

function answerOne(svm: LocalSvm, logger: Logger, raw: unknown): JsonRpcResponse {
  const request = jsonRpcRequestSchema.safeParse(raw);
  if (!request.success) return rpcError(null, new SolanaRpcError(RPC_INVALID_REQUEST, 'Invalid request'));
  const { id = null, method, params = [] } = request.data;
  if (!isRpcMethodName(method)) return rpcError(id, new SolanaRpcError(RPC_METHOD_NOT_FOUND, 'Method not found'));
  try {
    return { jsonrpc: '2.0', id, result: callRpcMethod(svm, method, params) };
  } catch (err) {
    if (err instanceof SolanaRpcError) return rpcError(id, err);
    logger.error({ method, err: err instanceof Error ? err.message : String(err) }, 'rpc method failed');
    return rpcError(id, new SolanaRpcError(RPC_INTERNAL_ERROR, 'Internal error'));
  }
}

function answer(svm: LocalSvm, logger: Logger, body: unknown): JsonRpcResponse | JsonRpcResponse[] {
  if (!Array.isArray(body)) return answerOne(svm, logger, body);
  if (body.length === 0 || body.length > MAX_BATCH)
    return rpcError(null, new SolanaRpcError(RPC_INVALID_REQUEST, `Invalid request: a batch holds 1 to ${MAX_BATCH}`));
  return body.map((one) => answerOne(svm, logger, one));
}

function send(res: http.ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function handle(
  options: StartSolanaRpcOptions,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method === 'GET' && pathname === '/health') return send(res, 200, 'text/plain', 'ok');
  if (req.method !== 'POST' || pathname !== '/') {
    res.setHeader('allow', 'POST');
    return send(res, 405, 'text/plain', 'use POST / (JSON-RPC 2.0)');
  }
  let body: unknown;
  try {
    body = await readJsonBody(req);
  } catch (err) {
    if (err instanceof HttpBodyError && err.status !== 400) return send(res, err.status, 'text/plain', err.message);
    return send(
      res,
      200,
      'application/json',
      stringifyWithBigInts(rpcError(null, new SolanaRpcError(RPC_PARSE_ERROR, 'Parse error'))),
    );
  }
  send(res, 200, 'application/json', stringifyWithBigInts(answer(options.svm, options.logger, body)));
}

export async function startSolanaRpcServer(options: StartSolanaRpcOptions): Promise<LoopbackServer> {
  assertLoopbackHost(options.host);
  const server = http.createServer((req, res) => {
    handle(options, req, res).catch((err: unknown) => {
      options.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'rpc handler crashed');
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error');
      else res.destroy();
    });
  });
  return listenOnLoopback(server, options.port ?? 0);
}
