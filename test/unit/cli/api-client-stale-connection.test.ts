/**
 * The CLI's HTTP client against a real node:http server that closes idle kept-alive connections (as the API
 * does): a request sent right after the process was busy for longer than the server keeps a connection idle goes
 * out on a new connection and is answered, where it used to be written on the connection the server had closed
 * meanwhile (`network_error`: "read ECONNRESET", or "socket hang up"). The busy stretch stands for the key derivation
 * and signing `xx` does between a sign-in's requests; it blocks the thread (Atomics.wait), so no timer of the process
 * runs during it, as none runs while the CLI computes. That quick requests share a connection is not asserted: it
 * depends on how soon one follows the other.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../../src/cli/core/api-client.js';

/** The server's keep-alive time-out: the shortest whose announced hint (whole seconds) still lets clients reuse. */
const KEEP_ALIVE_MS = 2_000;

/** Blocks this thread for `ms`, as a synchronous computation does: no timer, no I/O callback runs meanwhile. */
function busyFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('xx HTTP client: kept-alive connections left idle while the process was busy', function () {
  this.timeout(30_000);

  it('sends the request after a busy stretch on a new connection, not on the one the server closed meanwhile', async () => {
    let connections = 0;
    const server = http.createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const client = new ApiClient({ baseUrl: url, token: undefined });
      assert.deepEqual(await client.request('POST', '/v1/identity/nonce'), { path: '/v1/identity/nonce' });
      assert.deepEqual(await client.request('GET', '/v1/whoami'), { path: '/v1/whoami' });
      const before = connections;

      // Longer than the server keeps the connection idle (recent Node servers keep it a second past the time-out
      // they announce): it is closed by the time the next request is written.
      busyFor(KEEP_ALIVE_MS + 2_000);
      assert.deepEqual(await client.request('POST', '/v1/identity/init', { body: { chain: 'evm' } }), {
        path: '/v1/identity/init',
      });
      assert.equal(connections, before + 1, 'the request after the busy stretch went out on a new connection');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
