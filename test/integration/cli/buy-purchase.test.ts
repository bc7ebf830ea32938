/**
 * `xx buy` resumes an unsettled purchase from its state directory (src/cli/commands/buy/buy-purchases.ts):
 * the real `xx` binary, run twice, with an agent PAT against the real API (PostgreSQL + SoftHSM) and a seller
 * that declares the x402 `payment-identifier` extension (test/support/purchase-seller.ts).
 * - The seller's answer is lost: the run fails, the purchase stays in `<XX_HOME>/purchases/` (0600 file, 0700
 *   directory); the same command again sends the same payment (same identifier, same bytes), Treasury signed
 *   once, and the settled purchase is removed.
 * - `--new-purchase` pays anew under another identifier; other arguments are another purchase.
 * - `--self-custody`: the keystore's Base key signed once; the same command sends its stored payment again.
 * - `--timeout`: a seller that holds its answer ends the run with `seller_timeout` (exit 1) instead of holding
 *   it; held after the payment was sent, the same command sends that payment again; held before, nothing is
 *   signed. A `--timeout` out of 1..600 whole seconds is refused before anything is sent (exit 2).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

describe('xx buy resumes a purchase from its state directory (real binary, real API)', function () {
  this.timeout(240_000);
  let t: TestTreasury;
  let pat: string;
  let walletId: string;
  let seller: PurchaseSeller;
  const servers = new LoopbackServers();

  before(async () => {
    t = await startTestTreasury();
    const { session, agent_id } = await signInWithNewKey(t);
    const wallet = await t.request('POST', `/v1/agents/${agent_id}/wallets`, { token: session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id;
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
    seller = await startPurchaseSeller(servers);
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
  });

  const authorizations = () => t.db.knex('authorizations').where({ wallet_id: walletId }).select('id');
  const purchasesIn = (home: string) => {
    const dir = path.join(home, '.xx', 'purchases');
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : [];
  };

  it('a lost answer, then the same command: the stored payment is sent again; Treasury signed once', async () => {
    const home = fileTempDir('xx-buy-purchase-');
    const env = { HOME: home, XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    // No chain here to confirm the seller's transaction: the settlement report is not waited for.
    const args = ['buy', `${seller.url}/report`, '--max', '0.05', '--json', '--settlement-wait', '0'];
    const rowsBefore = (await authorizations()).length;
    seller.dropPaid = 1;
    const lost = await runXx(args, env);
    assert.notEqual(lost.code, 0, lost.stdout);
    const files = purchasesIn(home);
    assert.equal(files.length, 1, 'the unsettled purchase is kept');
    assert.equal(fs.statSync(files[0]!).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(files[0]!)).mode & 0o777, 0o700);

    const resumed = stdoutJson(await runXx(args, env), 'buy resumed');
    assert.equal(resumed.status, 200);
    assert.equal(resumed.paid, true);
    assert.equal(resumed.settlement, null);
    assert.equal(resumed.settlement_error, 'settlement_report_pending', '--settlement-wait 0: not waited for');
    const [first, second] = seller.paymentHeaders.slice(-2);
    assert.equal(second, first, 'the same payment, byte for byte');
    assert.match(String(seller.ids.at(-1)), /^pay_[0-9a-f]{32}$/);
    assert.equal((await authorizations()).length, rowsBefore + 1, 'Treasury signed once');
    assert.deepEqual(purchasesIn(home), [], 'the settled purchase is removed');
  });

  it('--new-purchase pays anew under another identifier; another body is another purchase', async () => {
    const home = fileTempDir('xx-buy-purchase-');
    const env = { HOME: home, XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    // No chain here to confirm the seller's transaction: the settlement report is not waited for.
    const args = ['buy', `${seller.url}/report`, '--max', '0.05', '--json', '--settlement-wait', '0'];
    seller.dropPaid = 1;
    assert.notEqual((await runXx(args, env)).code, 0);
    const lostId = seller.ids.at(-1);
    const rowsBefore = (await authorizations()).length;

    const other = stdoutJson(
      await runXx([...args, '--method', 'POST', '--body', '{"q":1}'], env),
      'another purchase while one is unsettled',
    );
    assert.equal(other.paid, true);
    assert.notEqual(seller.ids.at(-1), lostId);
    assert.equal(purchasesIn(home).length, 1, 'the lost one is still kept');

    const fresh = stdoutJson(await runXx([...args, '--new-purchase'], env), 'buy --new-purchase');
    assert.equal(fresh.paid, true);
    assert.notEqual(seller.ids.at(-1), lostId, 'a new identifier');
    assert.equal((await authorizations()).length, rowsBefore + 2);
    assert.deepEqual(purchasesIn(home), []);
  });

  it('--self-custody: the same command sends the payment the keystore key signed, not a second one', async () => {
    const env = {
      ...xxHomeFor('buy-purchase-self', 'http://127.0.0.1:9', 'correct horse battery'),
      XX_RPC_URL: 'http://127.0.0.1:9',
    };
    const phrase = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    stdoutJson(await runXx(['wallet', 'import', '--json'], { ...env, XX_MNEMONIC: phrase }), 'wallet import');
    const args = [
      'buy',
      `${seller.url}/report`,
      '--self-custody',
      '--network',
      'base-sepolia',
      '--max',
      '0.05',
      '--json',
    ];
    seller.dropPaid = 1;
    const lost = await runXx(args, env);
    assert.notEqual(lost.code, 0, lost.stdout);
    assert.equal(purchasesIn(env.HOME).length, 1);
    const resumed = stdoutJson(await runXx(args, env), 'buy --self-custody resumed');
    assert.equal(resumed.paid, true);
    const [first, second] = seller.paymentHeaders.slice(-2);
    assert.equal(second, first, 'the same signed payment, byte for byte');
    assert.deepEqual(purchasesIn(env.HOME), []);
  });

  it('--timeout: a paid answer held past it is seller_timeout; the same command sends the same payment, signed once', async () => {
    const home = fileTempDir('xx-buy-timeout-');
    const env = { HOME: home, XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    const args = ['buy', `${seller.url}/report`, '--max', '0.05', '--json', '--settlement-wait', '0', '--timeout', '2'];
    const rowsBefore = (await authorizations()).length;
    const sent = seller.paymentHeaders.length;
    seller.stallPaid = 1;
    const started = Date.now();
    const held = await runXx(args, env);
    // Without the bound the run waits for the seller for ever; with it, it ends in seconds.
    assert.ok(Date.now() - started < 60_000, `ended after ${Date.now() - started} ms`);
    assert.equal(held.code, 1, held.stderr);
    const e = stderrJson(held, 'buy held by the seller');
    assert.equal(e.error_code, 'seller_timeout');
    assert.equal(e.details.timeout_seconds, 2);
    assert.equal(seller.paymentHeaders.length, sent + 1, 'the payment was sent');
    assert.equal(purchasesIn(home).length, 1, 'the unsettled purchase is kept');

    const resumed = stdoutJson(await runXx(args, env), 'buy after the time-out');
    assert.equal(resumed.paid, true);
    const [first, second] = seller.paymentHeaders.slice(-2);
    assert.equal(second, first, 'the same payment, byte for byte');
    assert.equal((await authorizations()).length, rowsBefore + 1, 'Treasury signed once');
    assert.deepEqual(purchasesIn(home), []);
  });

  it('--timeout: a seller that never answers the first request is seller_timeout with nothing signed; bad values exit 2', async () => {
    const silent = await servers.listen(() => undefined);
    const home = fileTempDir('xx-buy-timeout-');
    const env = { HOME: home, XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    const rowsBefore = (await authorizations()).length;
    const held = await runXx(['buy', `${silent}/report`, '--max', '0.05', '--json', '--timeout', '1'], env);
    assert.equal(held.code, 1, held.stderr);
    assert.equal(stderrJson(held, 'buy from a silent seller').error_code, 'seller_timeout');
    assert.equal((await authorizations()).length, rowsBefore, 'nothing was signed');
    assert.deepEqual(purchasesIn(home), []);

    for (const bad of ['0', '601', '1.5', '-1', 'ten', '']) {
      const refused = await runXx(['buy', `${seller.url}/report`, '--json', '--timeout', bad], env);
      assert.deepEqual(
        [refused.code, stderrJson(refused, `--timeout ${bad}`).error_code],
        [2, 'invalid_argument'],
        `--timeout '${bad}'`,
      );
    }
  });
});
