/**
 * The few node:http helpers the sandbox's faucet and facilitator share: a size-capped JSON body reader,
 * a JSON responder with no-store caching, a loopback listener that reports its URL, and the logger a server
 * uses when it is given none. Bodies are never
 * logged. Defends against oversized bodies (413) and non-JSON bodies (400); it does not authenticate
 * callers: both servers listen on 127.0.0.1 only and hold nothing but public anvil dev keys.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';

export const MAX_JSON_BODY_BYTES = 64 * 1024;

export class HttpBodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'HttpBodyError';
  }
}

/** Reads and parses a JSON request body (at most `limit` bytes). */
export async function readJsonBody(req: http.IncomingMessage, limit = MAX_JSON_BODY_BYTES): Promise<unknown> {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type && !type.startsWith('application/json'))
    throw new HttpBodyError(415, 'content-type must be application/json');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new HttpBodyError(413, `request body larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpBodyError(413, `request body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpBodyError(400, 'request body must be a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpBodyError(400, 'request body is not valid JSON');
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendText(res: http.ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export interface LoopbackServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (port 0 = any free port) and resolves with the bound URL. */
export async function listenOnLoopback(server: http.Server, port = 0): Promise<LoopbackServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/** Runs tasks one at a time, in call order (one sending account → no nonce races). */
export function createSerialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** The logger of a sandbox server given none: pino named `name` (also its `service` field), ISO timestamps. */
export function sandboxServerLogger(name: string): Logger {
  return pino({ name, base: { service: name }, timestamp: pino.stdTimeFunctions.isoTime });
}
