/**
 * Proofs of control re-checked on a timer (src/api/sellers/proofs/) through real components: the API over HTTP,
 * PostgreSQL, the SoftHSM signer, sellers' origins and a gate's address as loopback HTTP servers, and an injected
 * resolver standing in for DNS (`gate.test` and every name under it → 127.0.0.1). The app's clock is the test's, moved
 * forward past TREASURY_PROOF_RECHECK_SECONDS (1 h here; grace 2 h) instead of waiting; rounds are driven with
 * `runOnce()` (the background rounds are stopped).
 * - The token rule: a file that mentions the token inside a longer line proves nothing; the token alone on a line
 *   (CRLF, surrounding spaces) does.
 * - A seller's origin that serves another file is withdrawn at the next re-check: the public catalogue no longer lists
 *   the seller, an audit event and a log line (without the token) say why, the metric counts it.
 * - An origin that is down is kept within the grace and withdrawn after it; back and serving the token, its proof is
 *   refreshed (`verified_at` = the re-check's time).
 * - A gate's URL and base domain are independent: the domain withdrawn, the URL refreshed; the URL withdrawn, the
 *   domain left as it was (it is re-checked only while the URL is proven).
 * - Two re-checkers on one database (two connection pools) never fetch one proof twice in a round.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knexFactory, { type Knex } from 'knex';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { HostResolver } from '../../../src/api/net/vetted-fetch.js';
import { PgProofRecheckStore } from '../../../src/api/sellers/proofs/proof-recheck-store.js';
import { ProofRechecker } from '../../../src/api/sellers/proofs/proof-rechecker.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { captureLog } from '../../support/log-capture.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const HOUR = 3_600_000;
const BASE = 'gate.test';
const LOOPBACK = [{ address: '127.0.0.1', family: 4 as const }];
const resolveHost: HostResolver = async (hostname) => {
  if (hostname === BASE || hostname.endsWith(`.${BASE}`)) return LOOPBACK;
  throw new Error('ENOTFOUND');
};

/** A loopback server whose answer the test changes, which it can take down and bring back on the same port. */
class Site {
  requests = 0;
  private server: http.Server | undefined;
  private port = 0;
  constructor(private readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<this> {
    const server = http.createServer((req, res) => {
      this.requests++;
      this.handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** An origin serving `body()` at /.well-known/xx-verification.txt and a weather endpoint elsewhere. */
function originSite(body: () => string | null): Site {
  return new Site((req, res) => {
    if (req.url !== '/.well-known/xx-verification.txt') return res.writeHead(200).end('sunny');
    const text = body();
    if (text === null) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
  });
}

describe('proofs of control re-checked on a timer (HTTP, PostgreSQL, loopback origins)', function () {
  this.timeout(180_000);
  /** How far the app's clock is ahead of the wall clock. */
  let aheadMs = 0;
  const clock = () => new Date(Date.now() + aheadMs);
  const captured = captureLog('info');
  const t = useTestTreasury({
    clock,
    resolveHost,
    log: captured.log,
    extraEnv: {
      TREASURY_PROOF_RECHECK_SECONDS: '3600',
      TREASURY_PROOF_GRACE_SECONDS: '7200',
      TREASURY_DISCOVERY_CACHE_MS: '0',
    },
  });
  const sites: Site[] = [];
  let session: string;

  const site = async (s: Site) => {
    sites.push(s);
    return s.up();
  };
  const recheck = () => t.app.services.proofRechecker.runOnce();
  const sellerRow = (id: string) =>
    t.db.knex('sellers').where({ id }).first('verified_at', 'origin_recheck_at', 'account_id') as Promise<{
      verified_at: Date | null;
      origin_recheck_at: Date | null;
      account_id: string;
    }>;

  /** A seller on `origin`, its token learnt (served by the caller), optionally with an endpoint and a proven pay-to. */
  async function newSeller(name: string, origin: string, listed = false) {
    const created = await t.request('POST', '/v1/sellers', { token: session, body: { name, origin } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { seller_id, pat } = created.body as { seller_id: string; pat: string };
    if (listed) {
      const ep = await t.request('POST', `/v1/sellers/${seller_id}/endpoints`, {
        token: pat,
        body: { method: 'GET', path: '/weather', price: '0.01' },
      });
      assert.equal(ep.status, 201, JSON.stringify(ep.body));
      await provePayTo(t, session, seller_id, privateKeyToAccount(generatePrivateKey()));
    }
    const token = (await t.request('GET', `/v1/sellers/${seller_id}/verify`, { token: pat })).body.token as string;
    const verify = () => t.request('POST', `/v1/sellers/${seller_id}/verify`, { token: pat });
    return { seller_id, pat, token, verify };
  }

  const listed = async (origin: string) => {
    const res = await t.request('GET', '/discovery/resources?limit=100');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return JSON.stringify(res.body).includes(`${origin}/weather`);
  };

  before(async () => {
    // Rounds are driven by the test.
    await t.app.services.proofRechecker.stop();
    session = (await signInWithNewKey(t)).session;
  });
  after(async () => {
    for (const s of sites) await s.down();
  });

  it('refuses a file that mentions the token in a longer line; the token alone on a line proves', async () => {
    let body = '';
    const origin = await site(originSite(() => body));
    const seller = await newSeller('Mention Co', origin.url);
    body = `see ${seller.token} here\n`;
    const mention = await seller.verify();
    assert.equal(mention.status, 409, JSON.stringify(mention.body));
    assert.equal(mention.body.error_code, 'verification_token_mismatch');
    body = `# verification\r\n  ${seller.token}  \r\nother\r\n`;
    const ok = await seller.verify();
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.origin_verified, true);
  });

  it('withdraws an origin that serves another file: the catalogue no longer lists the seller, and it is audited', async () => {
    let body = '';
    const origin = await site(originSite(() => body));
    const seller = await newSeller('Changed Hands Co', origin.url, true);
    body = `${seller.token}\n`;
    assert.equal((await seller.verify()).status, 200);
    assert.ok(await listed(origin.url), 'listed while proven');

    assert.equal(await recheck(), 0, 'nothing due within the interval');
    body = 'a new owner, another file\n';
    aheadMs += HOUR + 1_000;
    assert.ok((await recheck()) >= 1);

    const row = await sellerRow(seller.seller_id);
    assert.equal(row.verified_at, null, 'withdrawn');
    assert.equal(await listed(origin.url), false, 'the catalogue no longer lists it');
    const seen = await t.request('GET', `/v1/sellers/${seller.seller_id}`, { token: seller.pat });
    assert.equal(seen.body.origin_verified, false, JSON.stringify(seen.body));

    const audit = await t.db
      .knex('audit_events')
      .where({ chain_key: row.account_id, event_type: 'seller.origin_proof_withdrawn' })
      .select('actor', 'payload');
    assert.equal(audit.length, 1);
    assert.equal(audit[0].payload.seller_id, seller.seller_id);
    assert.equal(audit[0].payload.reason, 'verification_token_mismatch');
    assert.equal(audit[0].payload.origin, origin.url);
    assert.ok(!JSON.stringify(audit[0]).includes(seller.token), 'the audit event never holds the token');
    const line = captured.lines.find((l) => l.includes('proof of control withdrawn') && l.includes(seller.seller_id));
    assert.ok(line, 'a log line says so');
    assert.equal(JSON.parse(line).reason, 'verification_token_mismatch');
    assert.ok(!captured.text().includes(seller.token), 'the log never holds the token');
    const metric = await t.app.metrics.registry.getSingleMetricAsString('treasury_proof_rechecks_total');
    assert.match(metric, /treasury_proof_rechecks_total\{proof="seller_origin",outcome="withdrawn"\} [1-9]/);

    // Proven again by its owner, it is listed again.
    body = `${seller.token}\n`;
    assert.equal((await seller.verify()).status, 200);
    assert.ok(await listed(origin.url));
  });

  it('keeps an unreachable origin within the grace, refreshes it when back, withdraws it after the grace', async () => {
    let token = '';
    const origin = await site(originSite(() => `${token}\n`));
    const seller = await newSeller('Flaky Co', origin.url);
    token = seller.token;
    assert.equal((await seller.verify()).status, 200);
    const proven = (await sellerRow(seller.seller_id)).verified_at!;

    await origin.down(); // connection refused
    aheadMs += HOUR + 1_000;
    await recheck();
    assert.deepEqual((await sellerRow(seller.seller_id)).verified_at, proven, 'kept within the grace');

    await origin.up();
    aheadMs += HOUR + 1_000;
    const before = clock().getTime();
    await recheck();
    const refreshed = (await sellerRow(seller.seller_id)).verified_at!;
    assert.ok(refreshed.getTime() >= before, `refreshed to the re-check's time: ${refreshed.toISOString()}`);

    await origin.down();
    aheadMs += HOUR + 1_000;
    await recheck();
    assert.deepEqual(
      (await sellerRow(seller.seller_id)).verified_at,
      refreshed,
      'kept: an hour since the last success',
    );
    aheadMs += HOUR + 1_000;
    await recheck();
    assert.equal(
      (await sellerRow(seller.seller_id)).verified_at,
      null,
      'withdrawn: the grace since the last success ran out',
    );
    const audit = await t.db
      .knex('audit_events')
      .where({ event_type: 'seller.origin_proof_withdrawn' })
      .whereRaw(`payload->>'seller_id' = ?`, [seller.seller_id])
      .select('payload');
    assert.equal(audit[0]?.payload.reason, 'grace_expired');
    await origin.up();
  });

  it("a gate's URL and base domain are withdrawn independently", async () => {
    const serves = { url: true, domain: true };
    let token = '';
    const gateSite = await site(
      new Site((req, res) => {
        const host = String(req.headers.host ?? '');
        const isUrl = host.startsWith(`${BASE}:`);
        if (req.url !== '/.well-known/xx-gate-verification.txt' || !(isUrl ? serves.url : serves.domain))
          return res.writeHead(404).end();
        res.writeHead(200).end(`${token}\n`);
      }),
    );
    const gatePat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body
      .pat as string;
    const port = new URL(gateSite.url).port;
    const named = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: `http://${BASE}:${port}`, network: 'eip155:84532', base_domain: BASE },
    });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    token = named.body.token as string;
    const proveBoth = async () => {
      const proven = await t.request('POST', '/v1/gate/address/verify', { token: gatePat });
      assert.ok(proven.body.verified_at && proven.body.base_domain_verified_at, JSON.stringify(proven.body));
    };
    await proveBoth();
    const address = () => t.request('GET', '/v1/gate/address', { token: gatePat }).then((r) => r.body);

    // The domain's wildcard record now points elsewhere: the domain is withdrawn, the URL refreshed.
    serves.domain = false;
    aheadMs += HOUR + 1_000;
    const before = clock().getTime();
    await recheck();
    let view = await address();
    assert.equal(view.base_domain_verified_at, null, JSON.stringify(view));
    assert.ok(Date.parse(view.verified_at) >= before, 'the URL is refreshed');

    // Proven again; then the URL serves no token: the URL is withdrawn, the domain left as it was.
    serves.domain = true;
    await proveBoth();
    const domainProven = (await address()).base_domain_verified_at;
    serves.url = false;
    aheadMs += HOUR + 1_000;
    await recheck();
    view = await address();
    assert.equal(view.verified_at, null, JSON.stringify(view));
    assert.equal(view.base_domain_verified_at, domainProven, 'a withdrawn URL withdraws nothing else');
    const events = await t.db
      .knex('audit_events')
      .whereIn('event_type', ['gate.address_proof_withdrawn', 'gate.base_domain_proof_withdrawn'])
      .orderBy('created_at')
      .select('event_type', 'payload');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.reason]),
      [
        ['gate.base_domain_proof_withdrawn', 'gate_verification_not_found'],
        ['gate.address_proof_withdrawn', 'gate_verification_not_found'],
      ],
    );
  });

  it('two re-checkers on one database never fetch one proof twice in a round', async () => {
    const origins: Site[] = [];
    for (let i = 0; i < 6; i++) {
      let token = '';
      const origin = await site(originSite(() => `${token}\n`));
      const seller = await newSeller(`Twin Co ${i}`, origin.url);
      token = seller.token;
      assert.equal((await seller.verify()).status, 200);
      origins.push(origin);
    }
    for (const o of origins) o.requests = 0;
    aheadMs += HOUR + 1_000;
    const due = Number(
      (
        await t.db.knex.raw(
          `SELECT (SELECT count(*) FROM sellers WHERE verified_at IS NOT NULL)
                + (SELECT count(*) FROM gate_addresses WHERE verified_at IS NOT NULL)
                + (SELECT count(*) FROM gate_addresses WHERE verified_at IS NOT NULL AND base_domain_verified_at IS NOT NULL) AS n`,
        )
      ).rows[0].n,
    );
    const pools: Knex[] = [0, 1].map(() => knexFactory({ client: 'pg', connection: t.db.connectionString }));
    try {
      const workers = pools.map(
        (knex) =>
          new ProofRechecker({
            store: new PgProofRecheckStore(knex),
            outbound: { allowPrivate: true, resolveHost },
            metrics: t.app.metrics,
            log: pino({ level: 'silent' }),
            clock,
            options: { intervalSeconds: 3600, graceSeconds: 7200, roundMs: 0, batch: 100 },
          }),
      );
      const done = await Promise.all(workers.map((w) => w.runOnce()));
      assert.equal(done[0]! + done[1]!, due, `each due proof re-checked once: ${JSON.stringify(done)} of ${due}`);
      assert.deepEqual(
        origins.map((o) => o.requests),
        origins.map(() => 1),
        'each origin fetched exactly once',
      );
      assert.deepEqual(await Promise.all(workers.map((w) => w.runOnce())), [0, 0], 'nothing due again');
    } finally {
      await Promise.all(pools.map((k) => k.destroy()));
    }
  });
});
