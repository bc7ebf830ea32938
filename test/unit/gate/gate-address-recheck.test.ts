/**
 * The gate's proof of its address once proven (src/gate/gate-address-proof.ts): it asks the platform again every
 * `recheckMs` (an hour in production); while the platform's view still has the URL and the base domain proven it
 * does nothing more (no verify call, so no platform fetch); once the platform withdrew a proof it proves again. The
 * platform here is an in-process stub answering as the API does.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { GateAddressProof, PROOF_RECHECK_MS } from '../../../src/gate/gate-address-proof.js';

const VIEW = {
  account_id: 'acc_1',
  url: 'https://gate.example',
  network: 'eip155:84532',
  path: '/.well-known/xx-gate-verification.txt',
  token: `xx-gate-${'a'.repeat(32)}`,
  base_domain: 'gate.example',
};

/** A platform that proves on verify; `withdraw` clears a proof as the API's re-checker does. */
function platform() {
  const state = { url: null as string | null, domain: null as string | null };
  const calls = { address: 0, verify: 0 };
  const fetch = async (url: string): Promise<Response> => {
    if (url.endsWith('/verify')) {
      calls.verify++;
      const at = new Date().toISOString();
      state.url = at;
      state.domain = at;
    } else calls.address++;
    const body = { ...VIEW, verified_at: state.url, base_domain_verified_at: state.domain };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { state, calls, fetch };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function proofOf(fetch: (url: string) => Promise<Response>, recheckMs: number) {
  return new GateAddressProof({
    publicUrl: VIEW.url,
    network: VIEW.network,
    baseDomain: VIEW.base_domain,
    apiUrl: 'http://127.0.0.1:9',
    token: 'xxg_test',
    fetch,
    timeoutMs: 5_000,
    retryMs: 50,
    recheckMs,
    logger: pino({ level: 'silent' }),
  });
}

describe('gate address proof: a proven address is asked about again', () => {
  it('asks again every hour by default', () => {
    assert.equal(PROOF_RECHECK_MS, 3_600_000);
  });

  it('while still proven, asks the platform and verifies nothing', async () => {
    const { calls, fetch } = platform();
    const proof = proofOf(fetch, 40);
    await proof.start();
    assert.deepEqual(calls, { address: 1, verify: 1 }, 'the first start proves');
    await sleep(300);
    proof.stop();
    assert.ok(calls.address >= 3, `asked ${calls.address} times`);
    assert.equal(calls.verify, 1, 'no verify call while the platform still has it proven');
    assert.ok(proof.verified?.verified_at);
  });

  it('proves again once the platform withdrew the URL or the base domain', async () => {
    const { state, calls, fetch } = platform();
    const proof = proofOf(fetch, 40);
    await proof.start();
    state.url = null;
    state.domain = null;
    await sleep(150);
    assert.equal(calls.verify, 2, 'the withdrawn URL is proven again');
    state.domain = null;
    await sleep(150);
    proof.stop();
    assert.equal(calls.verify, 3, 'the withdrawn base domain alone is proven again');
    assert.ok(proof.verified?.base_domain_verified_at);
  });

  it('a restarted gate whose address is still proven does not ask the platform to fetch it', async () => {
    const { state, calls, fetch } = platform();
    state.url = state.domain = new Date().toISOString();
    const proof = proofOf(fetch, 3_600_000);
    await proof.start();
    proof.stop();
    assert.deepEqual(calls, { address: 1, verify: 0 });
    assert.equal(proof.token, VIEW.token);
  });
});
