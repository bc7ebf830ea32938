/**
 * `xx mcp --http`: the MCP Streamable HTTP transport on node:http at `/mcp`, one session (and one
 * McpServer) per `initialize`, ended by DELETE or when the process stops.
 *
 * Defends: DNS rebinding — a request whose Host header is not this server's own address (or whose Origin,
 * when sent, is not) gets 403 before anything is parsed; callers without the launch's bearer — every request,
 * on any path and with or without a session ID, must carry `Authorization: Bearer <token>`
 * (./mcp-http-bearer.ts), else 401 with `WWW-Authenticate: Bearer`, before its body is read or a session
 * looked up, so a session ID alone is no credential; oversized bodies (413 past MAX_BODY_BYTES); unbounded
 * sessions (at most MAX_SESSIONS, then 503). Does not: encrypt the traffic (plain HTTP; on a non-loopback
 * bind the bearer crosses the network in clear: see ./mcp-listen-address.ts), nor tell one bearer holder
 * from another (whoever holds the token spends with the PAT).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { bearerCheck } from './mcp-http-bearer.js';
import { allowedHostHeaders, type ListenAddress } from './mcp-listen-address.js';

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_SESSIONS = 64;

export interface RunningMcpHttp {
  url: string;
  close(): Promise<void>;
}

function rpcError(
  res: http.ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw Object.assign(new Error('body too large'), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw Object.assign(new Error('Parse error: the body is not JSON'), { status: 400 });
  }
}

/** Serves `buildServer`'s tools at `address`, to requests bearing `token` only. */
export async function startMcpHttp(
  address: ListenAddress,
  token: string,
  buildServer: () => McpServer,
): Promise<RunningMcpHttp> {
  const authorized = bearerCheck(token);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let allowedHosts = new Set<string>();
  const allowedOrigins = () => new Set([...allowedHosts].flatMap((h) => [`http://${h}`]));

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(host)) return rpcError(res, 403, `Invalid Host header: ${host.slice(0, 100)}`);
    const origin = req.headers.origin?.toLowerCase();
    if (origin !== undefined && !allowedOrigins().has(origin))
      return rpcError(res, 403, `Invalid Origin header: ${origin.slice(0, 100)}`);
    if (!authorized(req.headers.authorization))
      return rpcError(res, 401, 'Unauthorized: send Authorization: Bearer <the token xx mcp --http gave at start>', {
        'www-authenticate': 'Bearer realm="xx mcp"',
        connection: 'close', // the unread body is dropped with the connection, not drained
      });
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return rpcError(res, 404, 'Not found: the endpoint is /mcp');

    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = await readJson(req);
      } catch (err) {
        return rpcError(res, (err as { status?: number }).status ?? 400, (err as Error).message);
      }
    }
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing) return existing.transport.handleRequest(req, res, body);
    if (sessionId) return rpcError(res, 404, 'Session not found');
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, 'Bad Request: no session; start with initialize');
    if (sessions.size >= MAX_SESSIONS) return rpcError(res, 503, 'Too many sessions');
    const server = buildServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) rpcError(res, 500, err instanceof Error ? err.message : 'internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(address.port, address.host, () => resolve());
  });
  const bound = (httpServer.address() as AddressInfo).port;
  allowedHosts = allowedHostHeaders(address, bound);
  const shown = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${shown}:${bound}/mcp`,
    async close() {
      for (const { transport, server } of sessions.values()) {
        await transport.close().catch(() => undefined);
        await server.close().catch(() => undefined);
      }
      sessions.clear();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
