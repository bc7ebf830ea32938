/**
 * The seller commands' local pieces, without a Treasury: flag parsing that must fail with exit 2 and name
 * the flag (route prices, USD amounts, methods), table output that cannot carry terminal control
 * characters, and the `status` route probe against real local HTTP servers (402 healthy, other answers
 * unhealthy, non-GET routes only HEAD-probed, no origin skipped, unreachable reported).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { formatTable } from '../../../src/cli/commands/seller/seller-format.js';
import { methodArgument, parseRoutePrices, usdArgument } from '../../../src/cli/commands/seller/seller-kit.js';
import { probeRoute } from '../../../src/cli/commands/seller/status-command.js';

function exitsTwoNaming(flag: string) {
  return (err: unknown) => err instanceof CliError && err.exitCode === 2 && err.userMessage.includes(flag);
}

describe('seller command helpers', () => {
  it('parses --route-price path=USD, free routes included, and refuses malformed entries with exit 2', () => {
    assert.deepEqual(parseRoutePrices(['/a=0.10', '/b=0', '/c=', '/d=$1']), {
      '/a': '0.10',
      '/b': '0',
      '/c': '',
      '/d': '1',
    });
    assert.equal(parseRoutePrices([]), undefined);
    for (const bad of ['/a', 'a=1', '=1', '/a=cheap', '/a=1.1234567', '/a=-1']) {
      assert.throws(() => parseRoutePrices([bad]), exitsTwoNaming('--route-price'), bad);
    }
  });

  it('checks USD amounts and methods locally', () => {
    assert.equal(usdArgument('--price', '0.05'), '0.05');
    assert.equal(usdArgument('--price', '$2'), '2');
    for (const bad of ['', 'abc', '01', '1e3', '0.0000001', 'NaN'])
      assert.throws(() => usdArgument('--price', bad), exitsTwoNaming('--price'), bad);
    assert.equal(methodArgument('post'), 'POST');
    assert.throws(() => methodArgument('TRACE'), exitsTwoNaming('--method'));
  });

  it('renders tables without control characters', () => {
    const out = formatTable(
      ['name', 'path'],
      [
        ['evil\u001b[2J\r\nname', '/x'],
        [null, '/y'],
      ],
    );
    assert.doesNotMatch(out, /[\u0000-\u001f](?<!\n)/);
    assert.equal(out.split('\n').length, 3);
    assert.equal(formatTable(['a'], [], 'nothing'), 'nothing');
  });

  it('probes routes: 402 healthy, others unhealthy, non-GET only with HEAD, no origin skipped', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/paid') return void res.writeHead(402).end();
      if (req.url === '/open') return void res.writeHead(200).end('free lunch');
      res.writeHead(405).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      assert.equal((await probeRoute(origin, { method: 'GET', path: '/paid' })).state, 'healthy');
      const open = await probeRoute(origin, { method: 'GET', path: '/open' });
      assert.equal(open.state, 'unhealthy');
      assert.equal(open.http_status, 200);
      const post = await probeRoute(origin, { method: 'POST', path: '/submit' });
      assert.equal(post.state, 'unchecked');
      assert.equal(post.probe, 'HEAD');
      assert.ok(!seen.some((s) => s.startsWith('POST')), 'a POST route is never called with POST');
      assert.equal((await probeRoute(null, { method: 'GET', path: '/paid' })).state, 'skipped');
    } finally {
      await new Promise((r) => server.close(r));
    }
    const down = await probeRoute(origin, { method: 'GET', path: '/paid' });
    assert.equal(down.state, 'unhealthy');
    assert.equal(down.http_status, null);
  });
});
