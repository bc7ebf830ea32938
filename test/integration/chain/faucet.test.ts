/**
 * The sandbox faucet against a real anvil: it mints exactly the asked USD amount (10^6 raw units per
 * dollar) on both routes; every malformed request gets 400 invalid_request and changes no balance and
 * no supply; it refuses (503 faucet_wrong_chain) an RPC whose chain id is not the configured one and an
 * RPC that is not anvil; it counts outcomes in treasury_sandbox_faucet_mints_total.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { getAddress } from 'viem';
import { startFaucet, usdToRaw, type FaucetHandle } from '../../../ops/sandbox/chain/faucet-server.js';
import { testUsdcAbi } from '../../../ops/sandbox/chain/deploy-test-usdc.js';
import { anvilDevAccount, readTokenBalance, useTestChain } from '../../support/chain-harness.js';

async function post(
  url: string,
  body: unknown,
  raw = false,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A JSON-RPC endpoint that claims to be a geth node on the sandbox chain id (it answers only two methods). */
async function startFakeGeth(chainId: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const one = (r: { id: number; method: string }) => ({
        jsonrpc: '2.0',
        id: r.id,
        result:
          r.method === 'eth_chainId'
            ? `0x${chainId.toString(16)}`
            : r.method === 'web3_clientVersion'
              ? 'Geth/v1.14.0-stable/linux-amd64/go1.22'
              : null,
      });
      const parsed = JSON.parse(text) as { id: number; method: string } | Array<{ id: number; method: string }>;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('sandbox faucet', function () {
  this.timeout(60_000);
  const chain = useTestChain();
  const silent = pino({ level: 'silent' });
  const totalSupply = () =>
    chain.publicClient.readContract({ address: chain.usdc, abi: testUsdcAbi, functionName: 'totalSupply' });

  it('converts USD decimal strings to raw units without floating point', () => {
    assert.equal(usdToRaw('1'), 1_000_000n);
    assert.equal(usdToRaw('0.000001'), 1n);
    assert.equal(usdToRaw('12.5'), 12_500_000n);
    assert.equal(usdToRaw('1000000'), 1_000_000_000_000n);
    assert.equal(usdToRaw('0.1'), 100_000n);
  });

  it('mints exactly the asked amount (POST /fund and POST /) and reports tx hash and new balance', async () => {
    const address = anvilDevAccount(8).address;
    const before = await readTokenBalance(chain, address);
    const first = await post(`${chain.faucetUrl}/fund`, { address, amount_usd: '12.345678' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(Object.keys(first.body).sort(), ['address', 'amount_raw', 'amount_usd', 'balance_raw', 'tx_hash']);
    assert.equal(first.body.address, address);
    assert.equal(first.body.amount_usd, '12.345678');
    assert.equal(first.body.amount_raw, '12345678');
    assert.equal(first.body.balance_raw, String(before + 12_345_678n));
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: first.body.tx_hash as `0x${string}` });
    assert.equal(receipt.status, 'success');

    // Lower-case addresses are accepted and answered checksummed.
    const second = await post(`${chain.faucetUrl}/`, { address: address.toLowerCase(), amount_usd: '0.000001' });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.address, address);
    assert.equal(await readTokenBalance(chain, address), before + 12_345_679n);
  });

  it('serialises concurrent mints (one sending account) and each lands exactly', async () => {
    const address = anvilDevAccount(9).address;
    const before = await readTokenBalance(chain, address);
    const replies = await Promise.all(
      ['1', '2', '3', '4', '5'].map((amount) => post(`${chain.faucetUrl}/fund`, { address, amount_usd: amount })),
    );
    for (const r of replies) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await readTokenBalance(chain, address), before + 15_000_000n);
  });

  it('refuses malformed requests with 400 invalid_request and mints nothing', async () => {
    const address = anvilDevAccount(8).address;
    const bad: unknown[] = [
      {},
      { address },
      { amount_usd: '1' },
      { address, amount_usd: 1 },
      { address, amount_usd: '0' },
      { address, amount_usd: '0.0000001' },
      { address, amount_usd: '1000000.000001' },
      { address, amount_usd: '1e3' },
      { address, amount_usd: '-1' },
      { address, amount_usd: '01' },
      { address, amount_usd: ' 1' },
      { address, amount_usd: '1.' },
      { address, amount_usd: 'NaN' },
      { address: '0x1234', amount_usd: '1' },
      { address: address.slice(2), amount_usd: '1' },
      { address: `${address}00`, amount_usd: '1' },
      { address: `0x${'g'.repeat(40)}`, amount_usd: '1' },
      // Mixed case with a broken EIP-55 checksum.
      {
        address:
          address.slice(0, 2) +
          address.slice(2, 3).toLowerCase() +
          address.slice(3, 10).toUpperCase() +
          address.slice(10),
        amount_usd: '1',
      },
      { address, amount_usd: '1', extra: true },
      { address, amount_usd: '1', approve_permit2: 'true' },
      { address, amount_usd: '1', approve_permit2: 1 },
      [address, '1'],
      'fund me',
      null,
    ];
    const [supplyBefore, balanceBefore] = await Promise.all([totalSupply(), readTokenBalance(chain, address)]);
    for (const body of bad) {
      const r = await post(`${chain.faucetUrl}/fund`, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error_code, 'invalid_request');
      assert.equal(typeof r.body.user_message, 'string');
    }
    for (const raw of ['', '{', '{"address":']) {
      const r = await post(`${chain.faucetUrl}/fund`, raw, true);
      assert.equal(r.status, 400, `${JSON.stringify(raw)} → ${r.status}`);
      assert.equal(r.body.error_code, 'invalid_request');
    }
    assert.equal(await totalSupply(), supplyBefore);
    assert.equal(await readTokenBalance(chain, address), balanceBefore);
  });

  it('refuses to mint when the RPC reports another chain id (503 faucet_wrong_chain)', async () => {
    const registry = new Registry();
    const faucet: FaucetHandle = await startFaucet({
      rpcUrl: chain.rpcUrl,
      chainId: 8453,
      usdc: chain.usdc,
      registry,
      logger: silent,
    });
    try {
      const address = anvilDevAccount(8).address;
      const supplyBefore = await totalSupply();
      const r = await post(`${faucet.url}/fund`, { address, amount_usd: '1' });
      assert.equal(r.status, 503);
      assert.equal(r.body.error_code, 'faucet_wrong_chain');
      assert.equal(await totalSupply(), supplyBefore);
      assert.match(await registry.metrics(), /treasury_sandbox_faucet_mints_total\{outcome="wrong_chain"\} 1/);
    } finally {
      await faucet.stop();
    }
  });

  it('refuses to mint when the RPC is not anvil, even on the right chain id', async () => {
    const fake = await startFakeGeth(chain.chainId);
    const faucet = await startFaucet({ rpcUrl: fake.url, chainId: chain.chainId, usdc: chain.usdc, logger: silent });
    try {
      const r = await post(`${faucet.url}/fund`, { address: anvilDevAccount(8).address, amount_usd: '1' });
      assert.equal(r.status, 503);
      assert.equal(r.body.error_code, 'faucet_wrong_chain');
    } finally {
      await faucet.stop();
      await fake.close();
    }
  });

  it('logs structured JSON lines without the minter key', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const minterKey = anvilDevAccount(0).privateKey;
    const faucet = await startFaucet({
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      usdc: chain.usdc,
      minterKey,
      logger,
    });
    try {
      assert.equal(
        (await post(`${faucet.url}/fund`, { address: anvilDevAccount(8).address, amount_usd: '2' })).status,
        200,
      );
      assert.equal((await post(`${faucet.url}/fund`, { address: 'nope', amount_usd: '2' })).status, 400);
    } finally {
      await faucet.stop();
    }
    assert.ok(lines.length >= 2);
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg?: string };
      assert.equal(typeof entry.msg, 'string');
      assert.ok(!line.toLowerCase().includes(minterKey.slice(2).toLowerCase()), `key leaked in log line: ${line}`);
    }
    assert.ok(lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'faucet minted test USDC'));
  });

  it('answers GET /health, 404 on unknown routes, 405 on GET /fund, and exports its counter', async () => {
    assert.deepEqual(await (await fetch(`${chain.faucetUrl}/health`)).json(), { status: 'ok' });
    assert.equal((await fetch(`${chain.faucetUrl}/nope`)).status, 404);
    assert.equal((await fetch(`${chain.faucetUrl}/fund`)).status, 405);
    const text = await chain.registry.metrics();
    assert.match(text, /treasury_sandbox_faucet_mints_total\{outcome="minted"\} \d+/);
    assert.match(text, /treasury_sandbox_faucet_mints_total\{outcome="invalid_request"\} \d+/);
    assert.equal(getAddress(chain.minter), anvilDevAccount(0).address);
  });
});
