/**
 * One seller cannot degrade the others (docs/security-model.md, "Tenant isolation: sellers"), through HTTP against
 * the real API, PostgreSQL and anvil. The verifier's background rounds are off; each test drives it with
 * runOnce and counts batches and rows checked (each one RPC read), never milliseconds.
 * - A seller with 2,000 pending made-up rows does not delay another seller's honest row: it is verified by the
 *   first batch, which reads at most the share (25) of their account, the honest row included (one FIFO before:
 *   20 batches). Accounts with many sellers: ./ledger-account-fairness.test.ts.
 * - At its pending-row cap a seller's report is refused whole (429 ledger_pending_limit, Retry-After, nothing
 *   stored), a retry of rows already stored still passes, other sellers are not affected, and room comes back
 *   as the verifier decides rows.
 * - A seller holds at most TREASURY_SELLER_MAX_ENDPOINTS endpoints: by hand (also when created concurrently) and
 *   by OpenAPI refresh (refused whole); route matching sees every change to the endpoints at once.
 * - A gate batch (rows of several sellers) is admitted seller by seller and refused whole when one has no room.
 * - Proving a pay-to reopens the seller's rows rejected for paying an address it had not proved, but only as many
 *   as its pending cap has room for, newest first; the rest stay rejected until room comes back and it proves again.
 * The second test continues from the first's backlog.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import {
  anvilDevAccount,
  fundFromFaucet,
  startTestChain,
  transferUsdc,
  type TestChain,
} from '../../support/chain-harness.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const fakeHash = () => `0x${randomBytes(32).toString('hex')}`;
const PAYER = anvilDevAccount(7).address;
const BACKLOG = 2_000;
const SELLER_SHARE = 25;

interface Seller {
  seller_id: string;
  pat: string;
}

describe('one seller cannot degrade the others (HTTP, PostgreSQL, anvil)', function () {
  this.timeout(300_000);

  describe('the verifier serves sellers in turns, and pending rows are capped per seller', () => {
    let chain: TestChain;
    let t: TestTreasury;
    let session: string;
    let offsetMs = 0;
    const buyer = anvilDevAccount(7);
    const sellers: Record<'spammer' | 'honest', Seller & { payTo: ReturnType<typeof privateKeyToAccount> }> =
      {} as never;
    const rowOf = (txHash: string) => ({
      tx_hash: txHash,
      payer: buyer.address,
      amount: '10000',
      network: chain.network,
    });
    const batch = (seller: Seller, hashes: string[]) =>
      t.request('POST', '/v1/ledger/batch', { token: seller.pat, body: { rows: hashes.map(rowOf) } });
    const rowsOf = async (seller: Seller) =>
      (await t.db.knex('ledger_entries').where({ seller_id: seller.seller_id })) as Array<{
        tx_hash: string;
        status: string;
        attempts: number;
      }>;
    const spamHashes: string[] = [];

    before(async () => {
      chain = await startTestChain();
      t = await startTestTreasury({
        clock: () => new Date(Date.now() + offsetMs),
        extraEnv: {
          TREASURY_RPC_URLS: JSON.stringify({ [chain.network]: chain.rpcUrl }),
          TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0',
          TREASURY_LEDGER_MAX_PENDING_PER_SELLER: String(BACKLOG),
          TREASURY_LEDGER_VERIFY_SELLER_SHARE: String(SELLER_SHARE),
        },
      });
      session = (await signInWithNewKey(t)).session;
      for (const name of ['spammer', 'honest'] as const) {
        const created = (await t.request('POST', '/v1/sellers', { token: session, body: { name } })).body;
        sellers[name] = {
          seller_id: created.seller_id,
          pat: created.pat,
          payTo: privateKeyToAccount(generatePrivateKey()),
        };
        await provePayTo(t, session, created.seller_id, sellers[name].payTo);
      }
      await fundFromFaucet(chain, buyer.address, '1');
    });
    after(async () => {
      await t?.stop();
      await chain?.stop();
    });

    const transfer = (to: Address, amount: bigint): Promise<Hex> => transferUsdc(chain, buyer, to, amount);

    it("a seller's 2,000 pending made-up rows do not delay another seller's honest row", async () => {
      const { spammer, honest } = sellers;
      for (let i = 0; i < BACKLOG / 100; i++) {
        const hashes = Array.from({ length: 100 }, fakeHash);
        const res = await batch(spammer, hashes);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        spamHashes.push(...hashes);
      }
      const tx = await transfer(honest.payTo.address, 10_000n);
      const reported = await batch(honest, [tx]);
      assert.equal(reported.body.results[0].outcome, 'created', JSON.stringify(reported.body));

      const verifier = t.app.services.ledgerVerifier;
      let batches = 0;
      const honestStatus = async () => (await rowsOf(honest))[0]!.status;
      while ((await honestStatus()) === 'pending' && batches < BACKLOG / 100 + 1) {
        await verifier.runOnce();
        batches++;
      }
      assert.equal(await honestStatus(), 'verified');
      assert.equal(batches, 1, `the honest row waited ${batches} batches behind the backlog`);
      const checked = (await rowsOf(spammer)).filter((r) => r.attempts > 0);
      // Both sellers are one account's: its share of a batch goes round them, the honest row's turn first.
      assert.equal(checked.length, SELLER_SHARE - 1, "one batch read at most the account's share on chain");
      assert.ok(
        checked.every((r) => r.status === 'pending'),
        'made-up rows wait out the not-found grace',
      );
    });

    it("a report past the seller's pending cap is refused whole; retries and other sellers pass; room comes back", async () => {
      const { spammer, honest } = sellers;
      assert.equal((await rowsOf(spammer)).length, BACKLOG, 'the spammer is at its cap');
      const refused = await batch(spammer, Array.from({ length: 100 }, fakeHash));
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.error_code, 'ledger_pending_limit');
      assert.deepEqual(
        [refused.body.max_pending_rows, refused.body.pending_rows, refused.body.recovery?.kind],
        [BACKLOG, BACKLOG, 'retry_later'],
      );
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      assert.equal((await rowsOf(spammer)).length, BACKLOG, 'nothing of the refused batch was stored');
      const single = await t.request('POST', '/v1/ledger', { token: spammer.pat, body: rowOf(fakeHash()) });
      assert.deepEqual([single.status, single.body.error_code], [429, 'ledger_pending_limit']);

      // A retry of rows already stored adds nothing: admitted, every row a duplicate.
      const retried = await batch(spammer, spamHashes.slice(0, 100));
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.ok(retried.body.results.every((r: { outcome: string }) => r.outcome === 'duplicate'));
      const other = await t.request('POST', '/v1/ledger', { token: honest.pat, body: rowOf(fakeHash()) });
      assert.equal(other.status, 201, "another seller's report is not affected");

      // Past the not-found grace the verifier rejects made-up rows; each one rejected is room for a new one.
      offsetMs = 3_600_000;
      for (let i = 0; i < 4; i++) await t.app.services.ledgerVerifier.runOnce();
      const rejected = (await rowsOf(spammer)).filter((r) => r.status === 'rejected').length;
      assert.ok(rejected >= 50, `${rejected} rows rejected`);
      const admitted = await batch(spammer, Array.from({ length: 50 }, fakeHash));
      assert.equal(admitted.status, 200, JSON.stringify(admitted.body));
    });
  });

  describe('endpoints per seller are bounded, matching sees every change; the gate honours the pending cap', () => {
    let t: TestTreasury;
    let session: string;
    let doc: { openapi: string; paths: Record<string, unknown> };
    let server: http.Server;
    let url: string;
    const op = (operationId: string) => ({ get: { operationId, 'x-price-usd': '0.01' } });
    const createEndpoint = (seller: Seller, body: Record<string, unknown>) =>
      t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: seller.pat,
        body: { price: '0.01', ...body },
      });
    const endpointCount = async (seller: Seller) =>
      Number((await t.db.knex('endpoints').where({ seller_id: seller.seller_id }).count({ n: '*' }))[0]!.n);

    before(async () => {
      t = await startTestTreasury({
        extraEnv: { TREASURY_SELLER_MAX_ENDPOINTS: '5', TREASURY_LEDGER_MAX_PENDING_PER_SELLER: '12' },
      });
      session = (await signInWithNewKey(t)).session;
      server = http.createServer(openApiDocHandler(() => doc));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
    });
    after(async () => {
      server?.close();
      await t?.stop();
    });

    it('refuses the endpoint past the bound (409 endpoint_limit_reached), also to concurrent creates', async () => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Racing Co' } })).body;
      const raced = await Promise.all(
        Array.from({ length: 10 }, (_, i) => createEndpoint(seller, { path: `/race/${i}` })),
      );
      // A create that meets another one under way is refused at once (409 seller_refresh_in_progress, holding no
      // pooled connection): asked again, one at a time, as its Retry-After says.
      const answers = [];
      for (const [i, a] of raced.entries())
        answers.push(
          a.status === 409 && a.body.error_code === 'seller_refresh_in_progress'
            ? await createEndpoint(seller, { path: `/race/${i}` })
            : a,
        );
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [201, 201, 201, 201, 201, 409, 409, 409, 409, 409],
        JSON.stringify(answers.map((a) => a.body)),
      );
      for (const refused of answers.filter((a) => a.status === 409))
        assert.deepEqual([refused.body.error_code, refused.body.max_endpoints], ['endpoint_limit_reached', 5]);
      assert.equal(await endpointCount(seller), 5);
    });

    it('an OpenAPI refresh that would pass the bound adds nothing; one that fits adds', async () => {
      doc = { openapi: '3.1.0', paths: { '/a': op('a'), '/b': op('b'), '/c': op('c') } };
      const seller = (
        await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Docs Co', openapi_url: url } })
      ).body;
      assert.equal(seller.ingest.added.length, 3, JSON.stringify(seller.ingest));
      const manual = await createEndpoint(seller, { path: '/manual' });
      assert.equal(manual.status, 201);
      doc = { openapi: '3.1.0', paths: { ...doc.paths, '/d': op('d'), '/e': op('e') } };
      const refused = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
      assert.deepEqual([refused.status, refused.body.error_code], [409, 'endpoint_limit_reached']);
      assert.equal(await endpointCount(seller), 4, 'nothing of the refused refresh was added');
      doc = { openapi: '3.1.0', paths: { '/a': op('a'), '/b': op('b'), '/c': op('c'), '/d': op('d') } };
      const refreshed = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.deepEqual(refreshed.body.added, ['d']);
    });

    it('a report is matched against the endpoints as they are now: exact first, then the oldest fitting pattern', async () => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Moving Co' } })).body;
      const attributed = async (route: string, method = 'GET') =>
        (
          await t.request('POST', '/v1/ledger', {
            token: seller.pat,
            body: { tx_hash: fakeHash(), payer: PAYER, amount: '10000', network: 'eip155:84532', route, method },
          })
        ).body.endpoint_id as string | null;
      const older = (await createEndpoint(seller, { path: '/items', path_pattern: '/items/{id}' })).body.endpoint_id;
      assert.equal(await attributed('/items/7'), older);
      const newer = (await createEndpoint(seller, { path: '/items/{sku}', path_pattern: '/items/{sku}' })).body
        .endpoint_id;
      assert.equal(await attributed('/items/7'), older, 'the oldest fitting pattern wins');
      const moved = await t.request('PATCH', `/v1/sellers/${seller.seller_id}/endpoints/${older}`, {
        token: seller.pat,
        body: { path_pattern: '/things/{id}' },
      });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(await attributed('/items/7'), newer, 'a changed pattern is seen by the next report');
      assert.equal(await attributed('/things/7'), older);
      const exact = (await createEndpoint(seller, { path: '/items/7' })).body.endpoint_id;
      assert.equal(await attributed('/items/7'), exact, 'an exact path wins over any pattern');
      assert.equal(await attributed('/items/8'), newer);
      assert.equal(await attributed('/items/7', 'POST'), null, 'the method must match');
      // Compiled with the endpoint below, then deleted: the next report must not name it.
      const removable = (await createEndpoint(seller, { path: '/gone/{x}', path_pattern: '/gone/{x}' })).body
        .endpoint_id;
      assert.equal(await attributed('/items/8'), newer);
      const deleted = await t.request('DELETE', `/v1/sellers/${seller.seller_id}/endpoints/${removable}`, {
        token: seller.pat,
      });
      assert.equal(deleted.status, 204);
      assert.equal(await attributed('/gone/1'), null, 'a deleted endpoint matches nothing');
    });

    it('proving a pay-to reopens rejected recipient_mismatch rows only up to the pending cap, newest first', async () => {
      const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Reopen Co' } })).body;
      const rows = () => t.db.knex('ledger_entries').where({ seller_id: seller.seller_id });
      const count = async (status: string) => Number((await rows().where({ status }).count({ n: '*' }))[0]!.n);
      const report = async (n: number) => {
        const hashes = Array.from({ length: n }, fakeHash);
        const res = await t.request('POST', '/v1/ledger/batch', {
          token: seller.pat,
          body: {
            rows: hashes.map((tx_hash) => ({ tx_hash, payer: PAYER, amount: '10000', network: 'eip155:84532' })),
          },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return hashes;
      };
      // TEST FIXTURE: the verdict the verifier writes for a real transfer to an address the seller has not proved.
      const rejectPending = () =>
        rows().where({ status: 'pending' }).update({ status: 'rejected', reason: 'recipient_mismatch' });
      let newest: string[] = [];
      for (let round = 0; round < 3; round++) {
        newest = await report(12); // the cap each time: rejected rows stop counting
        await rejectPending();
      }
      const waiting = await report(3);
      assert.deepEqual([await count('pending'), await count('rejected')], [3, 36]);

      await provePayTo(t, session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
      assert.deepEqual([await count('pending'), await count('rejected')], [12, 27], 'reopened up to the cap only');
      const reopened = ((await rows().where({ status: 'pending' }).pluck('tx_hash')) as string[])
        .map((h) => h.trim())
        .filter((h) => !waiting.includes(h));
      assert.equal(reopened.length, 9);
      assert.ok(
        reopened.every((h) => newest.includes(h)),
        'the newest rejected rows are the ones reopened',
      );
      const refused = await t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: { tx_hash: fakeHash(), payer: PAYER, amount: '10000', network: 'eip155:84532' },
      });
      assert.deepEqual([refused.status, refused.body.error_code], [429, 'ledger_pending_limit']);

      // At the cap, another proof reopens nothing; once rows are decided, the next proof reopens as many as fit.
      await provePayTo(t, session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
      assert.deepEqual([await count('pending'), await count('rejected')], [12, 27]);
      await rows()
        .whereIn('id', rows().clone().where({ status: 'pending' }).limit(5).select('id'))
        .update({ status: 'rejected', reason: 'transaction_not_found' });
      await provePayTo(t, session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
      assert.deepEqual([await count('pending'), await count('rejected')], [12, 27]);
      assert.equal(Number((await rows().where({ reason: 'recipient_mismatch' }).count({ n: '*' }))[0]!.n), 22);
    });

    it("a gate batch is admitted against each row's seller, and refused whole when one has no room", async () => {
      const mpp = async (name: string) => {
        const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name, protocol: 'mpp' } }))
          .body;
        return (await createEndpoint(seller, { path: '/paid' })).body.endpoint_id as string;
      };
      const [full, roomy] = [await mpp('Gate Full'), await mpp('Gate Roomy')];
      const gate = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body.pat;
      const gateRow = (endpoint_id: string) => ({
        tx_hash: fakeHash(),
        payer: PAYER,
        amount: '10000',
        network: 'eip155:84532',
        endpoint_id,
      });
      const gateBatch = (rows: unknown[]) =>
        t.request('POST', '/v1/gate/ledger/batch', { token: gate, body: { rows } });
      const filled = await gateBatch([
        ...Array.from({ length: 11 }, () => gateRow(full)),
        gateRow(roomy),
        gateRow('ep_000000000000000000000000'),
      ]);
      assert.equal(filled.status, 200, JSON.stringify(filled.body));
      assert.deepEqual(
        filled.body.results.map((r: { outcome: string }) => r.outcome).slice(10),
        ['created', 'created', 'rejected'],
        'a row whose endpoint is unknown is refused alone',
      );
      const stored = async () => Number((await t.db.knex('ledger_entries').count({ n: '*' }))[0]!.n);
      const before = await stored();
      const refused = await gateBatch([gateRow(roomy), gateRow(full), gateRow(full)]);
      assert.deepEqual([refused.status, refused.body.error_code], [429, 'ledger_pending_limit']);
      assert.equal(await stored(), before, 'not even the row of the seller with room was stored');
      const single = await t.request('POST', '/v1/gate/ledger', { token: gate, body: gateRow(roomy) });
      assert.equal(single.status, 201, JSON.stringify(single.body));
      const last = await t.request('POST', '/v1/gate/ledger', { token: gate, body: gateRow(full) });
      assert.deepEqual([last.status, last.body.error_code], [201, undefined], 'the twelfth row fits');
      const past = await t.request('POST', '/v1/gate/ledger', { token: gate, body: gateRow(full) });
      assert.deepEqual([past.status, past.body.error_code], [429, 'ledger_pending_limit']);
    });
  });
});
