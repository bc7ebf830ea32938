/**
 * The chain's RPC is shared by every tenant (src/api/chain/chain-read-admission.ts): against a real anvil behind a
 * loopback stand-in for an RPC provider that takes 4 requests at once and answers 429 past them (as hosted
 * providers do), one tenant's flood of balance reads never takes the RPC from another tenant — the other tenant's
 * first read, made while the flood holds the provider, is answered fresh — and past its 64 reads waiting the
 * flooding tenant is refused 429 `chain_reads_exceeded` (`in_flight_max`, `queue_max`, Retry-After) with nothing
 * read, the refusals counted in `treasury_chain_read_refusals_total`.
 * On the code before the admission, every read went to the provider at once: the flood filled it and the other
 * tenant's read failed 503 `chain_unavailable`.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { startTestChain, type TestChain } from '../../support/chain-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';

/** Requests the stand-in provider takes at once; one more is answered 429. */
const PROVIDER_CAP = 4;

/** A provider in front of `upstream`: holds each request until `held()` settles, then forwards it; refuses past its cap. */
function cappedProvider(upstream: string, held: () => Promise<unknown>, seen: { refused: number; peak: number }) {
  let inFlight = 0;
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (inFlight >= PROVIDER_CAP) {
        seen.refused++;
        res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":"too many requests"}');
        return;
      }
      inFlight++;
      seen.peak = Math.max(seen.peak, inFlight);
      void (async () => {
        try {
          await held();
          const answer = await fetch(upstream, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: Buffer.concat(chunks),
          });
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
        } catch {
          res.writeHead(502).end();
        } finally {
          inFlight--;
        }
      })();
    });
  };
}

describe("chain reads: one tenant's flood never takes the RPC from another (real anvil behind a capped provider)", function () {
  this.timeout(180_000);
  let chain: TestChain;
  let t: TestTreasury;
  const servers = new LoopbackServers();
  let held: () => Promise<unknown> = () => sleep(400);
  const seen = { refused: 0, peak: 0 };
  let flooder: { token: string; walletId: string };
  let victim: { token: string; walletId: string };

  const walletOf = async (name: string) => {
    const token = await mintAgentKey(t, name);
    const created = await t.request('POST', '/v1/wallets', { token, body: {} });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { token, walletId: (created.body as { id: string }).id };
  };
  const balance = (who: { token: string; walletId: string }) =>
    t.request('GET', `/v1/wallets/${who.walletId}/balance`, { token: who.token });
  const outcome = (r: { status: number; body: any }) =>
    r.status === 200 ? `200 ${r.body.stale ? 'stale' : 'fresh'}` : `${r.status} ${r.body?.error_code}`;

  before(async () => {
    chain = await startTestChain();
    const provider = await servers.listen(cappedProvider(chain.rpcUrl, () => held(), seen));
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': provider }),
        TREASURY_RPC_TIMEOUT_MS: '5000',
        // The provider's cap: each tenant an eighth of it (one read at a time).
        TREASURY_CHAIN_READS_IN_FLIGHT: String(PROVIDER_CAP),
      },
    });
    flooder = await walletOf('flooder');
    victim = await walletOf('victim');
  });
  after(async () => {
    await t?.stop();
    await servers.closeAll();
    await chain?.stop();
  });

  it("another tenant's first balance read is answered fresh while one tenant floods the provider", async () => {
    held = () => sleep(400);
    const flood = Promise.all(Array.from({ length: 12 }, () => balance(flooder)));
    await sleep(100); // the flood holds the provider now
    const victimRead = await balance(victim);
    const floods = await flood;
    assert.equal(outcome(victimRead), '200 fresh', JSON.stringify(victimRead.body));
    assert.equal(victimRead.body.balance_raw, '0');
    // The flooder's own reads wait their turn, one at a time: none reached a full provider.
    const own = floods.map(outcome);
    assert.ok(
      own.every((o) => o === '200 fresh' || o === '503 chain_busy'),
      `the flooder's reads: ${own.join(', ')}`,
    );
    assert.ok(own.includes('200 fresh'));
    assert.equal(seen.refused, 0, 'the provider refused nothing');
    assert.ok(seen.peak <= 2, `at most one read of each tenant at the provider (peak ${seen.peak})`);
  });

  it("past a tenant's 64 reads waiting: 429 chain_reads_exceeded with its bounds, nothing read; another tenant still passes", async () => {
    // The provider holds every read until the test lets go: the flooder's first read stays at it, 64 wait.
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    held = () => gate;
    const before = seen.refused;
    const answered: Array<{ status: number; body: any; headers: Headers }> = [];
    const flood = Promise.all(Array.from({ length: 72 }, () => balance(flooder).then((r) => (answered.push(r), r))));
    for (let i = 0; i < 400 && answered.length < 72 - 1 - 64; i++) await sleep(25);
    const victimRead = balance(victim); // reaches the provider beside the flooder's one read
    await sleep(200);
    letGo();
    const floods = await flood;
    assert.equal(outcome(await victimRead), '200 fresh');
    const refused = floods.filter((r) => r.status === 429);
    assert.equal(refused.length, 72 - 1 - 64, floods.map(outcome).join(', '));
    for (const r of refused) {
      assert.equal(r.body.error_code, 'chain_reads_exceeded');
      assert.deepEqual([r.body.in_flight_max, r.body.queue_max, r.headers.get('retry-after')], [1, 64, '1']);
    }
    assert.ok(
      floods.every((r) => r.status === 429 || outcome(r) === '200 fresh' || outcome(r) === '503 chain_busy'),
      floods.map(outcome).join(', '),
    );
    assert.equal(seen.refused, before, 'the provider refused nothing');
    const metrics = String((await t.request('GET', '/metrics')).body);
    const counted = /treasury_chain_read_refusals_total\{reason="tenant_queue_full"\} (\d+)/.exec(metrics);
    assert.equal(Number(counted?.[1]), refused.length);
  });
});
