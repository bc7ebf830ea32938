/**
 * vettedGet (src/api/net/vetted-fetch.ts) against loopback servers: the connection goes to the vetted address
 * of a single resolution, also when Node asks the lookup for every address; redirects, oversize bodies
 * (declared or streamed) and slow servers are refused with a reason and nothing of the response.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { OutboundError, vettedGet, type HostResolver } from '../../../src/api/net/vetted-fetch.js';

const refusedWith = (reason: string) => (e: unknown) =>
  e instanceof OutboundError && e.reason === reason && !/secret/i.test(e.message);

describe('vettedGet', () => {
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  it('connects to the one vetted address and sends the URL host as Host', async () => {
    let host: string | undefined;
    const base = await servers.listen((req, res) => {
      host = req.headers.host;
      res.end('ok');
    });
    const port = Number(new URL(base).port);
    let calls = 0;
    const resolveHost: HostResolver = async () =>
      calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '192.0.2.1', family: 4 }];
    const res = await vettedGet(new URL(`http://named.test:${port}/x`), {
      allowPrivate: true,
      resolveHost,
      maxBytes: 100,
    });
    assert.deepEqual([res.status, res.body.toString(), host, calls], [200, 'ok', `named.test:${port}`, 1]);
  });

  it('refuses non-global answers without allowPrivate, whatever the port list says', async () => {
    const resolveHost: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    await assert.rejects(
      vettedGet(new URL('http://named.test/'), { allowPrivate: false, resolveHost, maxBytes: 100 }),
      refusedWith('address_refused'),
    );
    await assert.rejects(
      vettedGet(new URL('http://named.test:8080/'), {
        allowPrivate: false,
        allowedPorts: [8080],
        resolveHost,
        maxBytes: 100,
      }),
      refusedWith('address_refused'),
    );
    await assert.rejects(
      vettedGet(new URL('http://named.test:8080/'), { allowPrivate: false, resolveHost, maxBytes: 100 }),
      refusedWith('port_refused'),
    );
    await assert.rejects(
      vettedGet(new URL('http://gone.test/'), { allowPrivate: false, resolveHost: async () => [], maxBytes: 100 }),
      refusedWith('unresolvable'),
    );
    await assert.rejects(
      vettedGet(new URL('ftp://named.test/'), { allowPrivate: true, resolveHost, maxBytes: 100 }),
      refusedWith('scheme_refused'),
    );
    await assert.rejects(
      vettedGet(new URL('http://user:pw@named.test/'), { allowPrivate: true, resolveHost, maxBytes: 100 }),
      refusedWith('scheme_refused'),
    );
  });

  it('refuses redirects, oversize bodies (declared or streamed) and slow servers; reads nothing of a non-2xx', async () => {
    const base = await servers.listen((req, res) => {
      if (req.url === '/redirect') return res.writeHead(301, { location: 'http://169.254.169.254/secret' }).end();
      if (req.url === '/declared') return res.writeHead(200, { 'content-length': '1000' }).end('x'.repeat(1000));
      if (req.url === '/streamed') {
        res.writeHead(200);
        res.write('secret'.repeat(50));
        return setTimeout(() => res.end('secret'.repeat(50)), 20);
      }
      if (req.url === '/slow') return; // never answers
      return res.writeHead(503, { 'x-secret': 'secret' }).end('secret body');
    });
    const policy = { allowPrivate: true, maxBytes: 100, timeoutMs: 300 };
    await assert.rejects(vettedGet(new URL(`${base}/redirect`), policy), refusedWith('redirect_refused'));
    await assert.rejects(vettedGet(new URL(`${base}/declared`), policy), refusedWith('too_large'));
    await assert.rejects(vettedGet(new URL(`${base}/streamed`), policy), refusedWith('too_large'));
    // The slow server is refused by the policy's own deadline: asserted by order, not by a wall-clock
    // budget a loaded machine misses. Beside it, the same request with a deadline five times longer is still
    // pending when the short one is refused, and is refused with a timeout in its turn.
    const order: string[] = [];
    const slow = (name: string, timeoutMs: number) =>
      vettedGet(new URL(`${base}/slow`), { ...policy, timeoutMs }).catch((e: unknown) => {
        order.push(name);
        throw e;
      });
    const long = slow('long', 1_500);
    await assert.rejects(slow('short', policy.timeoutMs), refusedWith('timeout'));
    assert.deepEqual(order, ['short'], 'the longer deadline is still running when the shorter one is refused');
    await assert.rejects(long, refusedWith('timeout'));
    assert.deepEqual(order, ['short', 'long'], 'each request ended at its own deadline');
    assert.deepEqual(await vettedGet(new URL(`${base}/other`), policy), { status: 503, body: Buffer.alloc(0) });
  });

  for (const autoSelect of [true, false])
    it(`answers the lookup with the vetted address only (autoSelectFamily ${autoSelect}: asked for ${autoSelect ? 'all addresses' : 'one'})`, async () => {
      const before = net.getDefaultAutoSelectFamily();
      net.setDefaultAutoSelectFamily(autoSelect);
      const server = http.createServer((_req, res) => res.end('v6?'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const port = (server.address() as AddressInfo).port;
        const res = await vettedGet(new URL(`http://dual.test:${port}/`), {
          allowPrivate: true,
          maxBytes: 100,
          resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
        });
        assert.equal(res.body.toString(), 'v6?');
      } finally {
        net.setDefaultAutoSelectFamily(before);
        server.closeAllConnections();
        server.close();
      }
    });
});
