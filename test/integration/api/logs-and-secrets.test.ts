/**
 * What reaches the logs (and the caller) when something fails holds no secret:
 * - a query that fails with a secret-looking bind value — a unique violation (knex used to inline the value
 *   into the message), and a bad cast (PostgreSQL names the value in its own message) — is rendered by the
 *   API's error handler as a 500 whose log line names the SQLSTATE and constraint, never the value;
 * - an RPC endpoint with a provider key in its path, query and user-info that cannot be reached: the
 *   balance read answers 503 `chain_unavailable` and the log line names only the endpoint's scheme, host
 *   and port, never the key (viem puts the whole URL in its error message).
 * The pino lines are captured from the real logger (src/api/log/logger.ts).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import Koa from 'koa';
import { createKnex, type Knex } from '../../../src/api/db/knex-client.js';
import { errorHandler } from '../../../src/api/http/middleware/error-handler.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { captureLog } from '../../support/log-capture.js';
import { createTestDatabase, freePort, type TestDatabase } from '../../support/test-database.js';

const SECRET = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';

describe('logs and secrets (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);

  describe('a failing query with a secret bind value', () => {
    let db: TestDatabase;
    let knex: Knex;
    let server: http.Server;
    let base: string;
    const captured = captureLog();
    let failing: (k: Knex) => Promise<unknown>;

    before(async () => {
      db = await createTestDatabase({ migrate: false });
      knex = createKnex(db.connectionString, 2, 'treasury-test', captured.log);
      await knex.raw('CREATE TABLE secrets_probe (v text CONSTRAINT secrets_probe_v_key UNIQUE)');
      await knex('secrets_probe').insert({ v: SECRET });
      const app = new Koa();
      app.use(errorHandler(captured.log, createTreasuryMetrics()));
      app.use(async () => {
        await failing(knex);
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    after(async () => {
      await new Promise((r) => server?.close(r));
      await knex?.destroy();
      await db?.drop();
    });

    const cases: Array<[string, (k: Knex) => Promise<unknown>, string]> = [
      ['unique violation (knex query builder)', (k) => k('secrets_probe').insert({ v: SECRET }), '23505'],
      ['bad cast (PostgreSQL names the value)', (k) => k.raw('SELECT ?::int AS n', [SECRET]), '22P02'],
      ['unique violation (raw statement)', (k) => k.raw('INSERT INTO secrets_probe (v) VALUES (?)', [SECRET]), '23505'],
      // A literal `?` (jsonb's key-exists operator, written `\\?`) is where knex inlines a bind value into its message.
      [
        'unique violation, statement with a jsonb ? operator',
        (k) => k.raw("INSERT INTO secrets_probe (v) SELECT ? WHERE NOT ('{}'::jsonb \\? 'a')", [SECRET]),
        '23505',
      ],
    ];
    for (const [name, query, sqlstate] of cases) {
      it(`${name}: 500 internal_error, logged by SQLSTATE, the value nowhere`, async () => {
        failing = query;
        const before = captured.lines.length;
        const res = await fetch(base + '/x');
        const body = await res.text();
        assert.equal(res.status, 500);
        assert.equal(JSON.parse(body).error_code, 'internal_error');
        assert.ok(!body.includes(SECRET), 'not in the response');
        const lines = captured.lines.slice(before);
        const line = lines.find((l) => l.includes('request failed'));
        assert.ok(line, `a "request failed" line was logged: ${lines.join('\n')}`);
        assert.ok(!lines.join('\n').includes(SECRET), `the bind value is not logged:\n${lines.join('\n')}`);
        assert.ok(!lines.join('\n').includes(SECRET.slice(8, 24)), 'no part of it either');
        assert.ok(line.includes(`"sqlstate":"${sqlstate}"`), `the SQLSTATE ${sqlstate} is logged: ${line}`);
      });
    }
  });

  describe('an RPC endpoint with a provider key', () => {
    let t: TestTreasury;
    const captured = captureLog();
    const PATH_KEY = 'AlchemyPathKey0123456789abcdef';
    const QUERY_KEY = 'InfuraQueryKey9876543210fedcba';
    let port: number;

    before(async () => {
      port = await freePort();
      const url = `http://rpcuser:RpcPassw0rd@127.0.0.1:${port}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`;
      t = await startTestTreasury({
        log: captured.log,
        extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': url }), TREASURY_RPC_TIMEOUT_MS: '500' },
      });
    });
    after(async () => {
      await t?.stop();
    });

    it('a dead RPC: 503 chain_unavailable; the log names scheme, host and port, never the key, path or credentials', async () => {
      const key = await mintAgentKey(t, 'rpc-secret');
      const w = (await t.request('POST', '/v1/wallets', { token: key, body: {} })).body as { id: string };
      const before = captured.lines.length;
      const res = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token: key });
      assert.deepEqual([res.status, res.body.error_code], [503, 'chain_unavailable'], JSON.stringify(res.body));
      const revoke = await t.request('POST', `/v1/wallets/${w.id}/revoke`, { token: key });
      assert.equal(revoke.status, 503, JSON.stringify(revoke.body));
      const lines = captured.lines.slice(before).join('\n');
      assert.match(lines, /request failed/);
      assert.ok(lines.includes(`http://127.0.0.1:${port}`), `the endpoint's origin is logged:\n${lines}`);
      const everything = captured.text() + JSON.stringify(res.body) + JSON.stringify(revoke.body);
      for (const secret of [PATH_KEY, QUERY_KEY, 'apikey', 'RpcPassw0rd', 'rpcuser', '/v2/']) {
        assert.ok(!everything.includes(secret), `"${secret}" is not logged nor answered:\n${lines}`);
      }
    });
  });
});
