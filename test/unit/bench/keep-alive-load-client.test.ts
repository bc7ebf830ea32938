/**
 * The benchmark's load client against a real node:http server: statuses and bodies delimited by
 * Content-Length, requests beyond the connection count queued and served on the same keep-alive sockets,
 * and responses it cannot delimit (chunked) or connections that drop reported as failures, not hangs; a
 * connection idle past idleReopenMs is opened again before the server's keep-alive time-out can race it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KeepAliveLoadClient } from '../../../bench/support/keep-alive-load-client.js';

describe('bench keep-alive load client', () => {
  let server: http.Server;
  let port: number;
  const sockets = new Set<unknown>();
  const seen: Array<{ method: string; url: string; body: string; auth: string | undefined }> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      sockets.add(req.socket);
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, body, auth: req.headers.authorization });
        if (req.url === '/chunked') {
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          res.write('a');
          res.end('b');
        } else if (req.url === '/drop') {
          req.socket.destroy();
        } else {
          const status = req.url === '/missing' ? 404 : 200;
          // A body large enough to arrive in several chunks.
          const payload = JSON.stringify({ echo: body, pad: 'x'.repeat(200_000) });
          res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
          setTimeout(() => res.end(payload), 5);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers each request with its status; more requests than connections share the keep-alive sockets', async () => {
    sockets.clear();
    const client = new KeepAliveLoadClient({ host: '127.0.0.1', port, connections: 3 });
    const body = Buffer.from('{"n":1}');
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.request('POST', i % 5 === 0 ? '/missing' : `/pay/${i}`, { authorization: 'Bearer t' }, body),
      ),
    );
    assert.deepEqual(
      statuses,
      Array.from({ length: 20 }, (_, i) => (i % 5 === 0 ? 404 : 200)),
    );
    assert.equal(sockets.size, 3);
    const last = seen.at(-1)!;
    assert.deepEqual([last.method, last.body, last.auth], ['POST', '{"n":1}', 'Bearer t']);
    client.close();
  });

  it('reports a response without Content-Length and a dropped connection as failures, then goes on', async () => {
    const client = new KeepAliveLoadClient({ host: '127.0.0.1', port, connections: 1 });
    const empty = Buffer.alloc(0);
    assert.equal(await client.request('GET', '/chunked', {}, empty), 0);
    assert.equal(await client.request('GET', '/drop', {}, empty), 0);
    assert.equal(await client.request('GET', '/ok', {}, empty), 200);
    client.close();
  });

  it('opens an idle connection again before its next request', async () => {
    sockets.clear();
    const client = new KeepAliveLoadClient({ host: '127.0.0.1', port, connections: 1, idleReopenMs: 100 });
    const body = Buffer.from('{}');
    assert.equal(await client.request('POST', '/a', {}, body), 200);
    assert.equal(await client.request('POST', '/b', {}, body), 200);
    assert.equal(sockets.size, 1, 'back to back: the same connection');
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(await client.request('POST', '/c', {}, body), 200);
    assert.equal(sockets.size, 2, 'after 150 ms idle: a new connection');
    client.close();
  });
});
