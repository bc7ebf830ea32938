/**
 * What the gate works out once instead of on every request it proxies, and that it still decides each request
 * as before: the lists of the two Connection values nearly every message carries (src/gate/proxy-headers.ts)
 * are one object each and equal to what parsing gives, any other value is parsed; a bodyless request reads as
 * one shared "no body" (src/gate/request-body.ts); what the proxy reads of an origin URL (src/gate/origin-proxy.ts)
 * is remembered per URL, so an origin URL with a path or query of its own is refused however often the same
 * server is reached through another URL, and the same server without one is sent to.
 */
import assert from 'node:assert/strict';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OriginProxy } from '../../../src/gate/origin-proxy.js';
import { connectionListed, responseHeadersForBuyer } from '../../../src/gate/proxy-headers.js';
import { readRequestBody } from '../../../src/gate/request-body.js';
import type { RoutedRequest } from '../../../src/gate/gate-router.js';

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe('gate proxy: per-request work done once, each request decided as before', () => {
  it('keep-alive and close are one list each, as parsed; any other Connection value is parsed on its own', () => {
    for (const value of ['keep-alive', 'close']) {
      const first = connectionListed(value);
      assert.equal(connectionListed(value), first, `${value}: one list for every message`);
      assert.deepEqual([...first], [value]);
    }
    assert.deepEqual([...connectionListed('Keep-Alive, X_Secret')], ['keep-alive', 'x-secret']);
    assert.deepEqual([...connectionListed(['close', 'x-a,x-b'])], ['close', 'x-a', 'x-b']);
    // A longer list never grows the shared one.
    assert.deepEqual([...connectionListed('keep-alive')], ['keep-alive']);
    const buyer = responseHeadersForBuyer({ connection: 'keep-alive, x-origin-only', 'x-origin-only': '1', a: 'b' });
    assert.deepEqual(buyer, { a: 'b' });
    assert.deepEqual(responseHeadersForBuyer({ connection: 'keep-alive', 'x-origin-only': '1' }), {
      'x-origin-only': '1',
    });
  });

  it('a request that declares no body reads as none, one shared answer; one that does is read', async () => {
    const bodyless = { headers: {} } as IncomingMessage;
    const first = readRequestBody(bodyless, 1024);
    assert.equal(readRequestBody(bodyless, 1024), first);
    assert.deepEqual(await first, { kind: 'read', body: undefined });
    let read: Awaited<ReturnType<typeof readRequestBody>> | undefined;
    const server = http.createServer(async (req, res) => {
      read = await readRequestBody(req, 1024);
      res.end();
    });
    const url = await listen(server);
    try {
      await (await fetch(url, { method: 'POST', body: 'abc' })).arrayBuffer();
      assert.deepEqual(read, { kind: 'read', body: Buffer.from('abc') });
    } finally {
      server.close();
    }
  });

  it('an origin URL with a path or query of its own is refused each time; the same server without one is sent to', async () => {
    let runs = 0;
    const origin = http.createServer((_req, res) => {
      runs++;
      res.end('ok');
    });
    const originUrl = await listen(origin);
    const proxy = new OriginProxy({ timeoutMs: 5_000, allowPrivate: true });
    const routed: RoutedRequest = { slug: 's', by: 'prefix', prefix: '/s', originPath: '/x', originUrl: '/x' };
    let target = new URL(originUrl);
    const front = http.createServer(async (req, res) => {
      const exchange = await proxy.forward(req, res, target, routed, undefined);
      if (exchange.kind !== 'response') return void res.end(JSON.stringify(exchange));
      const captured = await exchange.response.body.capture(1024);
      exchange.done();
      res.end(captured.kind === 'bytes' ? captured.bytes : 'oversize');
    });
    const frontUrl = await listen(front);
    const ask = async (url: string) => {
      target = new URL(url);
      return (await fetch(frontUrl)).text();
    };
    try {
      for (let round = 0; round < 2; round++) {
        assert.equal(await ask(originUrl), 'ok');
        assert.deepEqual(JSON.parse(await ask(`${originUrl}/base`)), { kind: 'refused', cause: 'request_line' });
        assert.deepEqual(JSON.parse(await ask(`${originUrl}/?q=1`)), { kind: 'refused', cause: 'request_line' });
        assert.equal(await ask(`${originUrl}/`), 'ok');
      }
      assert.equal(runs, 4);
    } finally {
      front.close();
      origin.close();
      await proxy.close();
    }
  });
});
