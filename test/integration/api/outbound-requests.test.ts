/**
 * Requests the API makes to tenant-supplied URLs (seller origin verification, OpenAPI ingest), through HTTP:
 * the host is resolved once and the connection goes to the vetted address (a resolver that answers
 * differently the second time is never asked twice); non-global answers (loopback, NAT64, benchmarking,
 * site-local, any one of several) are refused; ports other than 80/443 are refused; and a refused or
 * failed response echoes nothing back (no Location, body or header of the remote side).
 * The resolver is injected (createTreasuryApp's `resolveHost`), so no test depends on real DNS.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import type { ResolvedAddress } from '../../../src/api/net/vetted-fetch.js';

/** A global (unicast, 2000::/3 or public IPv4) address nothing in these tests ever connects to. */
const PUBLIC_V4 = '93.184.215.14';

interface Served {
  port: number;
  hits: Array<{ url: string; host: string | undefined }>;
  close(): Promise<void>;
}

async function serveOn(address: string, port: number, handler: http.RequestListener): Promise<Served> {
  const hits: Served['hits'] = [];
  const server = http.createServer((req, res) => {
    hits.push({ url: req.url ?? '', host: req.headers.host });
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

describe('outbound requests to tenant-supplied URLs (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  const answers = new Map<string, () => ResolvedAddress[]>();
  const asked: string[] = [];
  const resolveHost = async (hostname: string) => {
    asked.push(hostname);
    const answer = answers.get(hostname);
    if (!answer) throw new Error('ENOTFOUND');
    return answer();
  };
  beforeEach(() => {
    answers.clear();
    asked.length = 0;
  });

  describe('in production mode (private addresses refused)', () => {
    let t: TestTreasury;
    let session: string;
    before(async () => {
      t = await startTestTreasury({ extraEnv: { TREASURY_VERIFY_ALLOW_PRIVATE: '0' }, resolveHost });
      session = (await signInWithNewKey(t)).session;
    });
    after(async () => {
      await t?.stop();
    });

    const verify = async (origin: string) => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Outbound Co', origin } }))
        .body;
      assert.ok(seller.pat, JSON.stringify(seller));
      return t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
    };

    it('refuses ports other than 80 and 443 before resolving anything, for origins and OpenAPI documents', async () => {
      answers.set('seller.test', () => [{ address: PUBLIC_V4, family: 4 }]);
      for (const origin of ['http://seller.test:8080', 'https://seller.test:22', 'http://seller.test:6379']) {
        const res = await verify(origin);
        assert.deepEqual(
          [res.status, res.body.error_code],
          [422, 'origin_port_refused'],
          `${origin} → ${JSON.stringify(res.body)}`,
        );
      }
      const ingest = (
        await t.request('POST', '/v1/sellers', {
          token: session,
          body: { name: 'Docs Port Co', openapi_url: 'http://seller.test:2375/openapi.json' },
        })
      ).body;
      assert.deepEqual(ingest.ingest, { error_code: 'origin_port_refused' });
      assert.deepEqual(asked, [], 'a refused port costs no lookup');
    });

    it('refuses a host when any address it resolves to is not global, and non-global IP literals', async () => {
      const cases: Array<[string, ResolvedAddress[]]> = [
        ['loopback.test', [{ address: '127.0.0.1', family: 4 }]],
        [
          'mixed.test',
          [
            { address: PUBLIC_V4, family: 4 },
            { address: '10.1.2.3', family: 4 },
          ],
        ],
        ['nat64.test', [{ address: '64:ff9b::a9fe:a9fe', family: 6 }]],
        ['mapped.test', [{ address: '::ffff:169.254.169.254', family: 6 }]],
        ['bench.test', [{ address: '198.18.0.1', family: 4 }]],
        ['sitelocal.test', [{ address: 'fec0::1', family: 6 }]],
        ['cgnat.test', [{ address: '100.64.0.1', family: 4 }]],
      ];
      for (const [host, addresses] of cases) {
        answers.set(host, () => addresses);
        const res = await verify(`http://${host}`);
        assert.deepEqual(
          [res.status, res.body.error_code],
          [422, 'origin_not_public'],
          `${host} → ${JSON.stringify(res.body)}`,
        );
      }
      for (const origin of [
        'http://[64:ff9b::7f00:1]',
        'http://198.18.0.1',
        'http://[fec0::1]',
        'http://[fe80::1]',
        'http://0.0.0.0',
        'http://[::ffff:127.0.0.1]',
        'http://[2001:db8::1]',
      ]) {
        const res = await verify(origin);
        assert.deepEqual(
          [res.status, res.body.error_code],
          [422, 'origin_not_public'],
          `${origin} → ${JSON.stringify(res.body)}`,
        );
      }
    });
  });

  describe('in sandbox mode (TREASURY_VERIFY_ALLOW_PRIVATE=1, loopback test servers)', () => {
    let t: TestTreasury;
    let session: string;
    before(async () => {
      t = await startTestTreasury({ resolveHost });
      session = (await signInWithNewKey(t)).session;
    });
    after(async () => {
      await t?.stop();
    });

    it('resolves once and connects to the vetted address: a rebinding second answer is never used', async () => {
      let token = '';
      const vetted = await serveOn('127.0.0.1', 0, (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`${token}\n`),
      );
      const rebound = await serveOn('127.0.0.2', vetted.port, (_req, res) => res.writeHead(200).end('rebound'));
      try {
        let lookups = 0;
        answers.set('rebind.test', () =>
          lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '127.0.0.2', family: 4 }],
        );
        const origin = `http://rebind.test:${vetted.port}`;
        const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Rebind Co', origin } }))
          .body;
        token = (await t.request('GET', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat })).body.token;
        const res = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.origin_verified, true);
        assert.deepEqual(asked, ['rebind.test'], 'the host is resolved exactly once');
        assert.deepEqual(
          vetted.hits,
          [{ url: '/.well-known/xx-verification.txt', host: `rebind.test:${vetted.port}` }],
          'the vetted address got the request, with the URL host in Host',
        );
        assert.deepEqual(rebound.hits, []);
      } finally {
        await rebound.close();
        await vetted.close();
      }
    });

    it('still refuses a global address on a port outside the list (allow-private lifts ports for private addresses only)', async () => {
      answers.set('public.test', () => [{ address: PUBLIC_V4, family: 4 }]);
      const seller = (
        await t.request('POST', '/v1/sellers', {
          token: session,
          body: { name: 'Public Port Co', origin: 'http://public.test:8443' },
        })
      ).body;
      const res = await t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
      assert.deepEqual([res.status, res.body.error_code], [422, 'origin_port_refused'], JSON.stringify(res.body));
    });

    it('echoes nothing of a refused or failed response: no Location, body, header or status line', async () => {
      const SECRET = 'SECRET-instance-credentials-7f3a';
      type Mode = 'redirect' | 'error' | 'huge' | 'notjson';
      let mode = 'redirect' as Mode;
      const origin = await serveOn('127.0.0.1', 0, (_req, res) => {
        if (mode === 'redirect')
          return res
            .writeHead(302, { location: `http://169.254.169.254/latest/meta-data/${SECRET}`, 'x-leak': SECRET })
            .end(SECRET);
        if (mode === 'error') return res.writeHead(500, `Oops ${SECRET}`, { 'x-leak': SECRET }).end(SECRET);
        if (mode === 'huge') return res.writeHead(200).end(SECRET.repeat(100_000));
        return res.writeHead(200, { 'content-type': 'application/json' }).end(`{"paths": ${SECRET}`);
      });
      try {
        const url = `http://127.0.0.1:${origin.port}`;
        const seller = (
          await t.request('POST', '/v1/sellers', {
            token: session,
            body: { name: 'Echo Co', origin: url, openapi_url: `${url}/openapi.json` },
          })
        ).body;
        const verify = () => t.request('POST', `/v1/sellers/${seller.seller_id}/verify`, { token: seller.pat });
        const refresh = () => t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
        const expected: Array<[Mode, () => Promise<{ status: number; body: any }>, string]> = [
          ['redirect', verify, 'origin_redirect_refused'],
          ['redirect', refresh, 'origin_redirect_refused'],
          ['error', verify, 'origin_unreachable'],
          ['error', refresh, 'origin_unreachable'],
          ['huge', verify, 'origin_response_too_large'],
          ['huge', refresh, 'origin_response_too_large'],
          ['notjson', refresh, 'openapi_invalid'],
        ];
        for (const [m, call, code] of expected) {
          mode = m;
          const res = await call();
          assert.equal(res.body.error_code, code, `${m}: ${JSON.stringify(res.body)}`);
          const text = JSON.stringify(res.body);
          for (const leak of [SECRET, '169.254', 'meta-data', 'Oops', 'x-leak'])
            assert.ok(!text.includes(leak), `${m}: "${leak}" echoed in ${text}`);
          assert.deepEqual(
            Object.keys(res.body).filter(
              (k) => !['error_code', 'user_message', 'request_id', 'origin', 'max_bytes'].includes(k),
            ),
            [],
            `${m}: only our own fields (${text})`,
          );
        }
      } finally {
        await origin.close();
      }
    });
  });
});
