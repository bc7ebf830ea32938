/**
 * The sandbox's demo origin for the gate: a plain Node HTTP server with no payment code at all — the kind of
 * seller the managed proxy mode is for (docs/gate.md). `GET /forecast` answers a JSON forecast, `/health` ok.
 * It remembers the header names of the last 100 requests it served and shows them, directly (not through
 * the gate), at `GET /__seen-headers`, so a test can check that no payment header ever reached it. It serves the
 * seller's origin-verification token at `/.well-known/xx-verification.txt` once told it (`serveVerification`):
 * the gate sells verified origins only. Loopback only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoOrigin {
  url: string;
  /** Serves `token` at /.well-known/xx-verification.txt (the platform's proof that the seller owns the origin). */
  serveVerification(token: string): void;
  stop(): Promise<void>;
}

export const DEMO_FORECAST = { forecast: 'sunny', high_c: 21, low_c: 12, served_by: 'an origin with no payment code' };

export async function startDemoOrigin(options: { port?: number } = {}): Promise<DemoOrigin> {
  const seen: Array<{ method: string; path: string; header_names: string[] }> = [];
  let verificationToken: string | undefined;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/.well-known/xx-verification.txt' && verificationToken) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${verificationToken}\n`);
      return;
    }
    if (path === '/__seen-headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ requests: seen }));
      return;
    }
    seen.push({ method: req.method ?? '', path, header_names: Object.keys(req.headers).sort() });
    if (seen.length > 100) seen.shift();
    if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
      return;
    }
    if (req.method === 'GET' && path === '/forecast') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(DEMO_FORECAST));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    serveVerification: (token) => {
      verificationToken = token;
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
