/**
 * `xx fund --testnet` from a folder with no sandbox.json (docs/sandbox.md): the CLI asks the API where the
 * sandbox's faucets are (GET /v1/sandbox/faucets) and funds the agent's wallet there, instead of printing public
 * faucet URLs and exiting 0 without funding. The real `xx` binary and API; the faucet is a loopback stand-in that
 * records what it was asked. An API that is no sandbox answers 404, and a faucet setting off loopback is refused
 * at the API's start.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadAppConfig } from '../../../src/api/config/app-config.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { runXx, stdoutJson } from './xx-process.js';

describe('xx fund --testnet outside the checkout: the faucet named by the API', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let faucet: http.Server;
  const asked: Array<Record<string, unknown>> = [];

  before(async () => {
    faucet = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        asked.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tx_hash: '0xabc' }));
      });
    });
    await new Promise<void>((resolve) => faucet.listen(0, '127.0.0.1', resolve));
    const faucetUrl = `http://127.0.0.1:${(faucet.address() as AddressInfo).port}/fund`;
    t = await startTestTreasury({ extraEnv: { TREASURY_SANDBOX_FAUCET_URL: faucetUrl } });
  });
  after(async () => {
    faucet?.close();
    await t?.stop();
  });

  it('names the faucet, and xx fund run from an empty folder funds the wallet there', async () => {
    const named = await t.request('GET', '/v1/sandbox/faucets');
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.match(named.body.faucet_url, /^http:\/\/127\.0\.0\.1:\d+\/fund$/);
    assert.equal(named.body.solana_faucet_url, null);

    const { session, agent_id } = await signInWithNewKey(t);
    const wallet = await t.request('POST', `/v1/agents/${agent_id}/wallets`, { token: session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const pat = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } });
    const elsewhere = fileTempDir('xx-fund-elsewhere-');
    const out = stdoutJson(
      await runXx(['fund', '--testnet', '--amount', '3', '--json'], {
        HOME: elsewhere,
        TREASURY_DATA_DIR: elsewhere, // no sandbox.json there
        XX_PAT: pat.body.pat,
        XX_API_URL: t.baseUrl,
        NO_COLOR: '1',
      }),
      'xx fund --testnet',
    );
    assert.equal(out.funded, true, JSON.stringify(out));
    assert.equal(out.address, wallet.body.address);
    assert.deepEqual(asked.at(-1), { address: wallet.body.address, amount_usd: '3' });
  });

  it('refuses a faucet off this machine at start', () => {
    assert.throws(
      () => loadAppConfig({ TREASURY_SANDBOX_FAUCET_URL: 'http://faucet.example.com/fund' }),
      /TREASURY_SANDBOX_FAUCET_URL/,
    );
  });
});
