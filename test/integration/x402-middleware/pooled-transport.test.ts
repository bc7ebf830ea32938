/**
 * The default transport of the seller's outbound calls (src/x402/pooled-request.ts: undici's `request` over a
 * shared keep-alive pool, used when no `fetch` is given), through the facilitator client against a real
 * loopback server: what bounded-fetch.ts promises holds on it — the JSON call as sent, one kept-alive
 * connection for many calls, a redirect never followed, a reply over the cap refused whether it declares its
 * length or not, one deadline over headers and body, a refused connection unavailable; and, as for Node's own
 * `fetch`, a proxy from the environment only with NODE_USE_ENV_PROXY=1.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFacilitatorClient } from '../../../src/x402/facilitator-client.js';
import { startSentinel } from '../../support/timer-order.js';
import { closedPortUrl } from './x402-fakes.js';

const request = { x402Version: 2 as const, paymentPayload: {}, paymentRequirements: {} };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback server answering each request with `answer`; it records what it received and its connections. */
async function server(answer: (req: Seen, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const tunnels: string[] = [];
  let connections = 0;
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(r);
      answer(r, res);
    });
  });
  s.on('connection', () => connections++);
  // A proxy's tunnel (undici's proxy agent asks CONNECT, for http targets too): recorded, then this server
  // answers what comes through it as if it were the target.
  s.on('connect', (req: http.IncomingMessage, socket: import('node:net').Socket, head: Buffer) => {
    tunnels.push(req.url!);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    s.emit('connection', socket);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    tunnels,
    get connections() {
      return connections;
    },
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

const client = (
  url: string,
  timeoutMs = 2_000,
  headers?: () => Record<string, string>,
  fetch?: typeof globalThis.fetch,
) =>
  createFacilitatorClient({
    url,
    verifyTimeoutMs: timeoutMs,
    settleTimeoutMs: timeoutMs,
    supportedTimeoutMs: timeoutMs,
    ...(headers ? { headers } : {}),
    ...(fetch ? { fetch } : {}),
  });

describe('the seller’s pooled transport (no fetch given)', () => {
  it('posts the JSON call as sent and keeps one connection alive across calls', async () => {
    const s = await server((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ isValid: true, payer: '0xabc' })),
    );
    try {
      const c = client(`${s.url}/base/`, 2_000, () => ({ authorization: 'Bearer facilitator-key' }));
      for (let i = 0; i < 20; i++) assert.deepEqual(await c.verify(request), { kind: 'ok', payer: '0xabc' });
      assert.equal(s.seen.length, 20);
      const first = s.seen[0]!;
      assert.equal(first.method, 'POST');
      assert.equal(first.url, '/base/verify');
      assert.equal(first.headers['content-type'], 'application/json');
      assert.equal(first.headers.accept, 'application/json');
      assert.equal(first.headers.authorization, 'Bearer facilitator-key');
      assert.deepEqual(JSON.parse(first.body), request);
      // Calls in turn reuse a kept-alive connection (the pool may open a second while the first is being freed).
      assert.ok(s.connections <= 2, `20 calls in turn over ${s.connections} connections`);
    } finally {
      await s.close();
    }
  });

  it('a redirect is refused, never followed', async () => {
    const s = await server((req, res) => {
      if (req.url.endsWith('/verify')) res.writeHead(308, { location: '/elsewhere' }).end('moved');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"isValid":true}');
    });
    try {
      assert.deepEqual(await client(s.url).verify(request), { kind: 'unavailable', cause: 'redirect (308) refused' });
      assert.deepEqual(
        s.seen.map((r) => r.url),
        ['/verify'],
      );
    } finally {
      await s.close();
    }
  });

  it('a reply over the cap is refused, with or without a declared length — through the pool and a caller’s fetch alike', async () => {
    const huge = JSON.stringify({ isValid: true, padding: 'x'.repeat(100_000) });
    const s = await server((req, res) => {
      if (req.url === '/declared/verify') return res.writeHead(200, { 'content-type': 'application/json' }).end(huge);
      // Chunked: no length announced, the cap is met while reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < huge.length; i += 8_192) res.write(huge.slice(i, i + 8_192));
      res.end();
    });
    try {
      for (const fetch of [undefined, globalThis.fetch])
        for (const base of [`${s.url}/declared`, `${s.url}/chunked`]) {
          const outcome = await client(base, 2_000, undefined, fetch).verify(request);
          assert.deepEqual(outcome, { kind: 'unavailable', cause: 'reply larger than 65536 bytes' }, base);
        }
    } finally {
      await s.close();
    }
  });

  it('one deadline covers the headers and the body; a refused connection is unavailable', async () => {
    const s = await server((req, res) => {
      if (req.url === '/silent/verify') return; // never answers
      // Headers at once, then a body that never ends.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isValid":');
    });
    try {
      for (const base of [`${s.url}/silent`, `${s.url}/stalled`]) {
        // Bounded by the client's own 100 ms timer, before a 2 s timer started with it (test/support/timer-order.ts).
        const sentinel = startSentinel(2_000);
        const outcome = await client(base, 100)
          .verify(request)
          .finally(() => sentinel.clear());
        assert.deepEqual(outcome, { kind: 'unavailable', cause: 'timed out after 100 ms' }, base);
        assert.equal(sentinel.fired, false, `${base}: not bounded by the 100 ms deadline`);
      }
    } finally {
      await s.close();
    }
    const refused = await client(await closedPortUrl()).settle(request);
    assert.equal(refused.kind, 'unavailable');
    assert.match(refused.kind === 'unavailable' ? refused.cause : '', /ECONNREFUSED/);
  });

  it('goes through HTTP_PROXY only with NODE_USE_ENV_PROXY=1, as Node’s fetch does', async () => {
    const PROXY_VARS = [
      'NODE_USE_ENV_PROXY',
      'HTTP_PROXY',
      'http_proxy',
      'HTTPS_PROXY',
      'https_proxy',
      'NO_PROXY',
      'no_proxy',
    ];
    const saved = Object.fromEntries(PROXY_VARS.map((k) => [k, process.env[k]]));
    const proxy = await server((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ isValid: true, payer: '0xproxied' })),
    );
    const gone = await closedPortUrl(); // nothing listens at the facilitator's address: only the proxy can answer
    try {
      for (const k of PROXY_VARS) delete process.env[k];
      process.env.HTTP_PROXY = proxy.url;
      const direct = await client(`${gone}/base`).verify(request);
      assert.equal(direct.kind, 'unavailable', 'HTTP_PROXY alone is not used');
      assert.equal(proxy.seen.length, 0);
      process.env.NODE_USE_ENV_PROXY = '1';
      assert.deepEqual(await client(`${gone}/base`).verify(request), { kind: 'ok', payer: '0xproxied' });
      assert.deepEqual(proxy.tunnels, [gone.slice('http://'.length)], 'a tunnel to the facilitator’s address');
      assert.deepEqual(
        proxy.seen.map((r) => [r.method, r.url]),
        [['POST', '/base/verify']],
      );
    } finally {
      for (const k of PROXY_VARS)
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      await proxy.close();
    }
  });
});
