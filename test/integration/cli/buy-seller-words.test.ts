/**
 * `xx buy` prints what was signed, not what a seller claims, and no seller text reaches the terminal raw: the
 * real `xx` binary with an agent PAT against the real API (PostgreSQL + SoftHSM) and a hostile loopback seller.
 * - A receipt whose `transaction` and `network` carry a terminal escape ("\x1b[2K": erase the line) and
 *   whose `amount` is "1": the "Paid …" line and `--json`'s receipt give the signed amount (0.01 USD) and
 *   network, the wallet that signed, and no transaction (`txHash` null); no escape on stderr.
 * - A refusal whose reason carries the escape: `Error: …` shows the reason with the control characters
 *   blanked out.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { encodePaymentRequired, encodeSettlementReceipt } from '../../../src/x402/header-codec.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { runXx, stdoutJson } from './xx-process.js';

const ERASE = '\x1b[2K';
const WORDS = `${ERASE}\rPaid 0.000001 USD, all fine`;

describe("xx buy: a seller's receipt and refusal reach the terminal as printable text (real binary, real API)", function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let pat: string;
  let walletAddress: string;
  let sellerUrl: string;
  const servers = new LoopbackServers();
  // What the seller answers a paid request with.
  let paid: (res: http.ServerResponse) => void = () => {};

  before(async () => {
    t = await startTestTreasury();
    const { session, agent_id } = await signInWithNewKey(t);
    const wallet = await t.request('POST', `/v1/agents/${agent_id}/wallets`, { token: session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletAddress = wallet.body.address;
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
    sellerUrl = await servers.listen((req, res) => {
      req.resume();
      if (typeof req.headers['payment-signature'] !== 'string') {
        const challenge = {
          x402Version: 2 as const,
          resource: { url: `http://${req.headers.host}${req.url}` },
          accepts: [paymentRequirements({ amount: '10000', maxTimeoutSeconds: 300 })],
        };
        res.writeHead(402, { 'payment-required': encodePaymentRequired(challenge as never) }).end('{}');
        return;
      }
      paid(res);
    });
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
  });

  const env = () => ({ HOME: fileTempDir('xx-buy-words-'), XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' });
  const buy = (json: boolean) =>
    runXx(['buy', `${sellerUrl}/report`, '--max', '0.05', ...(json ? ['--json'] : [])], env());

  it('a lying receipt: the signed amount and network, no transaction, no escape on the terminal', async () => {
    paid = (res) =>
      res
        .writeHead(200, {
          'content-type': 'text/plain',
          'payment-response': encodeSettlementReceipt({
            success: true,
            transaction: WORDS,
            network: `eip155:1${ERASE}`,
            payer: `0x${'9'.repeat(40)}${ERASE}`,
            amount: '1',
          } as never),
        })
        .end('the report');
    const text = await buy(false);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, 'the report\n');
    assert.ok(!text.stderr.includes('\x1b'), `an escape reached stderr: ${JSON.stringify(text.stderr)}`);
    assert.match(text.stderr, new RegExp(`Paid 0\\.01 USD from ${walletAddress} on eip155:84532\\.`));

    const json = stdoutJson(await buy(true), 'buy --json');
    assert.deepEqual(json.receipt, {
      txHash: null,
      payer: walletAddress,
      network: 'eip155:84532',
      amount: '0.01',
      amount_raw: '10000',
    });
    assert.equal(json.network, 'eip155:84532');
  });

  it("a refusal: the seller's reason is printed with its control characters blanked out", async () => {
    paid = (res) => res.writeHead(402, { 'content-type': 'application/json' }).end(JSON.stringify({ error: WORDS }));
    const run = await buy(false);
    assert.equal(run.code, 1, run.stderr);
    assert.ok(!run.stderr.includes('\x1b'), `an escape reached stderr: ${JSON.stringify(run.stderr)}`);
    assert.ok(!run.stderr.includes('\r'), `a carriage return reached stderr: ${JSON.stringify(run.stderr)}`);
    assert.match(run.stderr, /^Error: .*Paid 0\.000001 USD, all fine/m);
  });
});
