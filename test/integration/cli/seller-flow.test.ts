/**
 * The seller flow through the real `xx` CLI as a subprocess (node --import tsx src/cli/main.ts, no TTY)
 * against a real test Treasury (PostgreSQL + SoftHSM signer): service init → endpoints add/list → verify
 * against a local origin serving the well-known file → status (env on the first line, route health) →
 * a ledger row reported with a service PAT → ledger export as CSV → keys (removed) → every --json output
 * parses. Also: a missing --name without a TTY exits 2 naming the flag; the service PAT never reaches
 * stdout unless asked, and the service record on disk is 0600; the listing commands show every row of a
 * list longer than one page.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { TestTreasury } from '../../support/api-harness.js';
import { markLedgerVerifiedForTest } from '../../support/seller-pay-to.js';
import {
  assertOk as ok,
  filesUnder,
  runXx as runCli,
  startForwardedTreasury,
  type Forwarder,
  stderrJson,
  stdoutJson as parseJson,
  type XxRun,
} from './xx-process.js';
import { idsInListOrder } from '../../support/list-order.js';

const parseStderrJson = (run: XxRun) => stderrJson(run, 'the command');

/** A seller origin: the well-known file (body settable) and a paid-looking /search that answers 402. */
function serveOrigin(): Promise<{ origin: string; setFile(body: string | null): void; close(): Promise<void> }> {
  let file: string | null = null;
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/xx-verification.txt') {
      if (file === null) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(file);
    }
    if (req.url === '/search') return void res.writeHead(402, { 'content-type': 'application/json' }).end('{}');
    res.writeHead(404).end();
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        origin: `http://127.0.0.1:${port}`,
        setFile: (body) => (file = body),
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

describe('xx seller flow (CLI subprocess, HTTP, PostgreSQL)', function () {
  // Some twenty CLI subprocesses, several of which sign the owner in again (service init, service pat create /
  // list, service list --remote).
  this.timeout(180_000);
  let t: TestTreasury;
  let home: string;
  let env: Record<string, string>;
  let origin: Awaited<ReturnType<typeof serveOrigin>>;
  let forwarder: Forwarder;
  let server: string;

  before(async () => {
    // SIWE names the server's host: the CLI signs in through a forwarder whose URL is the public URL.
    ({ forwarder, t } = await startForwardedTreasury());
    server = forwarder.url;
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'xx-seller-'));
    env = {
      HOME: home,
      XX_API_URL: server,
      XX_KEYSTORE_PASSPHRASE: 'seller flow passphrase',
      XX_KEYSTORE_SCRYPT_LOG_N: '10',
      XX_SESSION_PATH: path.join(home, 'session.json'),
      XX_SERVICES_DIR: path.join(home, 'services'),
      XX_ACTIVE_SERVICE_PATH: path.join(home, 'active-service'),
      XX_AGENTS_DIR: path.join(home, 'agents'),
      XX_ACTIVE_AGENT_PATH: path.join(home, 'active-agent'),
      XX_SEEDS_DIR: path.join(home, 'seeds'),
      XX_CONFIG_PATH: path.join(home, 'config.json'),
      XX_CREDENTIALS_PATH: path.join(home, 'credentials.json'),
      NO_COLOR: '1',
    };
    // Signed up as a seller does: the keystore holds the seed that signs the owner in again to register a
    // service, list the account's services, mint service PATs and flush payouts; the service PAT `service init`
    // stores serves the rest of the seller flow.
    ok(await runCli(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    origin = await serveOrigin();
  });
  after(async () => {
    await origin?.close();
    await forwarder?.close();
    await t?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('service init → endpoints → verify → status → ledger export; keys exits 1; --json parses', async () => {
    const jsonOutputs: string[] = [];
    const json = async (args: string[]) => {
      const run = ok(await runCli([...args, '--json'], env), args.join(' '));
      jsonOutputs.push(args.join(' '));
      return parseJson(run, args.join(' '));
    };

    // Register the service; the PAT stays on disk (0600), not on stdout.
    const initRun = ok(
      await runCli(
        ['service', 'init', '--name', 'Search Co', '--capability', 'search', '--origin', origin.origin, '--json'],
        env,
      ),
      'service init',
    );
    const created = parseJson(initRun, 'service init');
    assert.match(created.seller_id, /^sel_[0-9a-f]{24}$/);
    assert.equal(created.pat, undefined);
    assert.doesNotMatch(initRun.stdout + initRun.stderr, /xx_pat_/);
    const records = filesUnder(env.XX_SERVICES_DIR!);
    assert.ok(records.length >= 1, 'a service record is written');
    for (const file of records) assert.equal(fs.statSync(file).mode & 0o777, 0o600, `${file} is 0600`);
    assert.ok(records.some((f) => fs.readFileSync(f, 'utf8').includes(created.seller_id)));

    const endpoint = await json(['endpoints', 'add', '--path', '/search', '--price', '0.05']);
    assert.match(endpoint.endpoint_id, /^ep_[0-9a-f]{24}$/);
    assert.equal(endpoint.price, '0.05');
    const listed = await json(['endpoints', 'list']);
    assert.deepEqual(
      listed.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id),
      [endpoint.endpoint_id],
    );

    // Verify: first without the file (exit 1, server's code, the expected path named), then with it.
    const missing = await runCli(['verify', '--json'], env);
    assert.equal(missing.code, 1, missing.stderr);
    const missingErr = parseStderrJson(missing);
    assert.equal(missingErr.error_code, 'well_known_not_found');
    assert.match(JSON.stringify(missingErr), /\/\.well-known\/xx-verification\.txt/);
    const servicePat = JSON.parse(
      fs.readFileSync(path.join(env.XX_SERVICES_DIR!, `${created.seller_id}.json`), 'utf8'),
    ).pat;
    const { token } = (await t.request('GET', `/v1/sellers/${created.seller_id}/verify`, { token: servicePat })).body;
    origin.setFile(`${token}\n`);
    const verified = await json(['verify']);
    assert.equal(verified.origin_verified, true);

    // Status: the env first, then the service and a healthy route (the origin answers 402).
    const status = ok(await runCli(['status'], env), 'status');
    const [first] = status.stdout.split('\n');
    assert.match(first!, /^env: \S+ \(/);
    assert.ok(first!.includes(server), first);
    assert.match(status.stdout, /GET \/search/);
    const statusJson = await json(['status']);
    assert.equal(statusJson.seller.origin_verified, true);
    assert.equal(statusJson.endpoint_count, 1);
    assert.equal(statusJson.endpoints[0].health.state, 'healthy');

    // A service PAT printed once by `service pat create`, used as the middleware would to report a payment.
    const minted = await json(['service', 'pat', 'create', '--label', 'middleware']);
    assert.match(minted.pat, /^xx_pat_/);
    const txHash = `0x${randomBytes(32).toString('hex')}`;
    const report = await t.request('POST', '/v1/ledger', {
      token: minted.pat,
      body: {
        tx_hash: txHash,
        payer: `0x${randomBytes(20).toString('hex')}`,
        amount: '50000',
        network: 'eip155:84532',
        endpoint_id: endpoint.endpoint_id,
        content_hash: randomBytes(32).toString('hex'),
      },
    });
    assert.equal(report.status, 201, JSON.stringify(report.body));

    const csv = ok(await runCli(['ledger', 'export', '--format', 'csv'], env), 'ledger export');
    assert.match(csv.stdout, /^created_at,id,tx_hash,/);
    assert.ok(csv.stdout.includes(txHash.toLowerCase()), csv.stdout);
    const [ledger, unverified] = await Promise.all([json(['ledger', 'list']), json(['ledger', 'revenue'])]);
    assert.equal(ledger.entries[0].tx_hash, txHash.toLowerCase());
    assert.equal(ledger.entries[0].status, 'pending');
    assert.deepEqual(
      [unverified.total_usd, unverified.pending.total_usd],
      ['0', '0.05'],
      'revenue counts verified rows only',
    );
    await markLedgerVerifiedForTest(t.db.knex, created.seller_id);
    const revenue = await json(['ledger', 'revenue']);
    assert.equal(revenue.total_usd, '0.05');

    // The rest of the seller surface answers JSON.
    const [shown, localList, pats, mode, banking, payouts] = await Promise.all([
      json(['service', 'show']),
      json(['service', 'list']),
      json(['service', 'pat', 'list']),
      json(['payout-mode', 'show']),
      json(['service', 'banking', 'status']),
      json(['service', 'payouts']),
    ]);
    assert.equal(shown.seller_id, created.seller_id);
    assert.ok(
      localList.services.some(
        (s: { seller_id: string; pat?: string }) => s.seller_id === created.seller_id && s.pat === undefined,
      ),
    );
    assert.ok(pats.pats.some((p: { id: string }) => p.id === minted.id));
    assert.equal(mode.payout_mode, 'direct');
    assert.equal(banking.state, 'none');
    assert.equal(payouts.payout_mode, 'direct');

    // Master keys are gone: exit 1 with the hint, structured under --json.
    const keys = await runCli(['keys', 'list'], env);
    assert.equal(keys.code, 1);
    assert.match(keys.stderr, /Master keys were removed on 2026-04-27/);
    const keysJson = await runCli(['keys', 'rotate', '--json'], env);
    assert.equal(keysJson.code, 1);
    assert.equal(parseStderrJson(keysJson).error_code, 'master_key_removed');
    for (const sub of [
      ['keys', 'create'],
      ['keys', 'revoke', 'mk_old'],
    ]) {
      const run = await runCli([...sub, '--json'], env);
      assert.equal(run.code, 1, sub.join(' '));
      assert.equal(parseStderrJson(run).error_code, 'master_key_removed', sub.join(' '));
    }

    assert.ok(jsonOutputs.length >= 10);
  });

  it('fails with exit 2 naming --name when service init has no name and no TTY', async () => {
    const run = await runCli(['service', 'init'], env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--name/);
    const bad = await runCli(['endpoints', 'add', '--path', '/x', '--price', 'cheap', '--json'], env);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--price/);
  });
  it('endpoints list, service list --remote, service pat list and service payouts show every row past the first page', async () => {
    const created = parseJson(
      ok(await runCli(['service', 'init', '--name', 'Many Co', '--json'], env), 'service init'),
      'service init',
    );
    const sellerId = created.seller_id as string;
    const { account_id: accountId } = await t.db.knex('sellers').where({ id: sellerId }).first('account_id');
    const hex = (n: number) => randomBytes(n).toString('hex');
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000);
    const many = 501; // one more than the largest page
    await t.db.knex('endpoints').insert(
      Array.from({ length: many }, (_, i) => ({
        id: `ep_${hex(12)}`,
        seller_id: sellerId,
        slug: `e${i}`,
        path: `/e${i}`,
        price_micro: '1000',
        created_at: at(i),
        updated_at: at(i),
      })),
    );
    // Paid out of earnings (seller_payables, which PostgreSQL holds every payout within).
    await t.db.knex('seller_payables').insert({ seller_id: sellerId, earned_micro: String(1000 * many) });
    await t.db.knex('payout_flushes').insert(
      Array.from({ length: many }, (_, i) => ({
        id: `po_${hex(12)}`,
        seller_id: sellerId,
        amount_micro: '1000',
        created_by: 'test',
        created_at: at(i),
      })),
    );
    await t.db.knex('sellers').insert(
      Array.from({ length: many }, (_, i) => ({
        id: `sel_${hex(12)}`,
        account_id: accountId,
        name: `s${i}`,
        slug: `many-${hex(6)}`,
        created_at: at(i),
        updated_at: at(i),
      })),
    );
    await t.db.knex('api_tokens').insert(
      Array.from({ length: many }, (_, i) => ({
        id: `pat_${hex(12)}`,
        token_hash: hex(32),
        kind: 'pat',
        scope_type: 'service',
        scope_id: sellerId,
        account_id: accountId,
        created_by: 'test',
        created_at: at(i),
      })),
    );

    const json = async (args: string[]) =>
      parseJson(ok(await runCli([...args, '--json'], env), args.join(' ')), args.join(' '));
    const ids = (table: string, where: Record<string, unknown>, order: 'asc' | 'desc' = 'asc') =>
      idsInListOrder(t.db.knex, table, where, order);
    const [endpoints, sellers, pats, payouts] = await Promise.all([
      json(['endpoints', 'list']),
      json(['service', 'list', '--remote']),
      json(['service', 'pat', 'list']),
      json(['service', 'payouts']),
    ]);
    assert.deepEqual(
      endpoints.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id),
      await ids('endpoints', { seller_id: sellerId }),
    );
    assert.deepEqual(
      sellers.sellers.map((e: { seller_id: string }) => e.seller_id),
      await ids('sellers', { account_id: accountId }),
    );
    assert.deepEqual(
      pats.pats.map((e: { id: string }) => e.id),
      await ids('api_tokens', { scope_id: sellerId, kind: 'pat' }),
    );
    assert.deepEqual(
      payouts.flushes.map((e: { id: string }) => e.id),
      await ids('payout_flushes', { seller_id: sellerId }, 'desc'),
    );
    assert.equal(payouts.next_cursor, undefined);
    assert.deepEqual([endpoints.endpoints.length, payouts.flushes.length], [many, many]);
    assert.ok(
      sellers.sellers.length > many && pats.pats.length > many,
      'the 501 inserted rows and the ones registered above',
    );
  });
});
