/**
 * The chain reads' admission (src/api/chain/chain-read-admission.ts): a read waits for its place among `inFlight`, a
 * tenant's an eighth of them at most, and the next free place goes to another tenant waiting; the Treasury accounts
 * of one owner's agents share the owner's share; past the longest wait 503 `chain_busy`, never read; the balance
 * reader hands a refusal on as it is — not as the RPC's failure, and never as a stale figure.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { BalanceReader } from '../../../src/api/chain/balance-reader.js';
import { ChainReadAdmission, isChainReadRefusal } from '../../../src/api/chain/chain-read-admission.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';

/** Reads whose answers the test releases, recorded by name as they start. */
function heldReads() {
  const started: string[] = [];
  const pending: Array<() => void> = [];
  const read = (name: string) => () => {
    started.push(name);
    return new Promise<string>((resolve) => pending.push(() => resolve(name)));
  };
  return { read, started, releaseAll: () => pending.splice(0).forEach((r) => r()) };
}

describe('chain reads: the admission', () => {
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  it('gives a tenant an eighth of the places; the next free one goes to the other tenant waiting', async () => {
    const reads = heldReads();
    const admission = new ChainReadAdmission({ inFlight: 8, waitMs: 60_000 }, createTreasuryMetrics());
    const a = ['a0', 'a1', 'a2'].map((n) => admission.run('acct_a', reads.read(n)));
    const b = ['b0', 'b1'].map((n) => admission.run('acct_b', reads.read(n)));
    assert.deepEqual(reads.started, ['a0', 'b0'], 'one read of each tenant at once');
    reads.releaseAll();
    await sleep(0);
    assert.deepEqual(reads.started.slice(2).sort(), ['a1', 'b1']);
    reads.releaseAll();
    await sleep(0);
    reads.releaseAll();
    assert.deepEqual(await Promise.all([...a, ...b]), ['a0', 'a1', 'a2', 'b0', 'b1']);
  });

  it("counts an agent's Treasury account under its owner's platform account", async () => {
    const reads = heldReads();
    const owner = (acct: string) => (acct === 'acct_agent1' || acct === 'acct_agent2' ? 'acc_owner' : acct);
    const admission = new ChainReadAdmission({ inFlight: 8, waitMs: 60_000, tenantOf: owner }, createTreasuryMetrics());
    const runs = [
      admission.run('acct_agent1', reads.read('agent1')),
      admission.run('acct_agent2', reads.read('agent2')),
      admission.run('acct_other', reads.read('other')),
    ];
    assert.deepEqual(reads.started, ['agent1', 'other'], "the owner's two agents share one place");
    for (let i = 0; i < 2; i++) {
      reads.releaseAll();
      await sleep(0);
    }
    await Promise.all(runs);
  });

  it('past the longest wait: 503 chain_busy with Retry-After, the read never made, the refusal counted', async () => {
    const reads = heldReads();
    const metrics = createTreasuryMetrics();
    const admission = new ChainReadAdmission({ inFlight: 1, waitMs: 30 }, metrics);
    const first = admission.run('acct_a', reads.read('first'));
    const late = await admission.run('acct_b', reads.read('late')).catch((e: unknown) => e);
    assert.ok(late instanceof AppError && isChainReadRefusal(late));
    assert.deepEqual([late.code, late.status, late.headers?.['Retry-After']], ['chain_busy', 503, '1']);
    assert.deepEqual(reads.started, ['first']);
    assert.match(await metrics.registry.metrics(), /treasury_chain_read_refusals_total\{reason="waited_too_long"\} 1/);
    reads.releaseAll();
    await first;
  });

  it("a read's own failure is not a refusal", () => {
    assert.equal(isChainReadRefusal(new AppError('chain_unavailable')), false);
    assert.equal(isChainReadRefusal(new Error('chain_busy')), false);
  });

  it('the balance reader hands a refusal on as it is: never as a stale figure, nor as the RPC failing', async () => {
    let mode: 'fresh' | 'refused' | 'rpc_failed' = 'fresh';
    const tenants: string[] = [];
    const reads = {
      run: async <T>(tenant: string, read: () => Promise<T>): Promise<T> => {
        tenants.push(tenant);
        if (mode === 'refused') throw new AppError('chain_busy', { headers: { 'Retry-After': '1' } });
        return read();
      },
    };
    // An RPC on loopback: every eth_call answers 5 while fresh, a 500 once it fails.
    const rpcUrl = await servers.listen((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (mode === 'rpc_failed') return void res.writeHead(500).end();
        const { id } = JSON.parse(body) as { id: number };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${'5'.padStart(64, '0')}` }));
      });
    });
    // Where figures are kept: written and never found (the reader's own memory serves the stale figure).
    const knex = Object.assign(() => ({ where: () => ({ first: async () => undefined }) }), {
      raw: () => Promise.resolve(),
    }) as unknown as Knex;
    const reader = new BalanceReader({
      knex,
      rpcUrls: { 'eip155:84532': rpcUrl },
      timeoutMs: 1_000,
      metrics: createTreasuryMetrics(),
      reads,
    });
    const chain = ChainRegistry.fromConfig(undefined).resolve('eip155:84532')!;
    const address = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
    assert.equal((await reader.usdcBalance('acct_a', chain, address)).stale, false);
    mode = 'refused';
    for (const call of [
      () => reader.usdcBalance('acct_a', chain, address),
      () => reader.usdcAllowance('acct_a', chain, address, address),
      () => reader.minedTransaction('acct_a', chain, `0x${'1'.repeat(64)}`),
    ])
      await assert.rejects(call(), (e: unknown) => e instanceof AppError && e.code === 'chain_busy');
    mode = 'rpc_failed';
    const stale = await reader.usdcBalance('acct_a', chain, address);
    assert.deepEqual([stale.stale, stale.balance_raw], [true, '5'], 'the RPC failing still serves the last figure');
    await assert.rejects(
      reader.usdcAllowance('acct_a', chain, address, address),
      (e: unknown) => e instanceof AppError && e.code === 'chain_unavailable',
    );
    assert.ok(tenants.every((t) => t === 'acct_a'));
  });
});
