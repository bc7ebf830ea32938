/**
 * The gate's proof of its address when only the base domain stays unproven (src/gate/gate-address-proof.ts): the URL
 * proven, the domain not (no wildcard record), the gate tries again with a wait that doubles from attempt to attempt
 * up to an hour — every GATE_REFRESH_MS, forever, a domain that never answers would cost the platform two outbound
 * fetches each time. The platform here is an in-process stub answering as the API does.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { domainRetryDelayMs, GateAddressProof, MAX_DOMAIN_RETRY_MS } from '../../../src/gate/gate-address-proof.js';

const VIEW = {
  account_id: 'acc_1',
  url: 'https://gate.example',
  network: 'eip155:84532',
  path: '/.well-known/xx-gate-verification.txt',
  token: `xx-gate-${'a'.repeat(32)}`,
  base_domain: 'gate.example',
  base_domain_verified_at: null,
};

/** A platform whose verify proves the URL and never the domain; counts the verify calls. */
function platform() {
  const calls = { verify: 0 };
  const fetch = async (url: string): Promise<Response> => {
    const verify = url.endsWith('/verify');
    if (verify) calls.verify++;
    const body = verify
      ? { ...VIEW, verified_at: new Date().toISOString(), base_domain_error: 'gate_verification_not_found' }
      : { ...VIEW, verified_at: null };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { calls, fetch };
}

describe('gate address proof: an unproven base domain is retried with a growing wait', () => {
  it('doubles GATE_REFRESH_MS from the second miss on, at most an hour, never less than GATE_REFRESH_MS', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((misses) => domainRetryDelayMs(30_000, misses)),
      [30_000, 60_000, 120_000, 240_000],
    );
    assert.equal(domainRetryDelayMs(30_000, 10_000), MAX_DOMAIN_RETRY_MS);
    assert.equal(domainRetryDelayMs(7_200_000, 1), 7_200_000, 'a longer GATE_REFRESH_MS is kept');
    assert.equal(domainRetryDelayMs(30_000, 0), 30_000);
  });

  it('asks the platform a handful of times in 1.6 s at GATE_REFRESH_MS=50, not every 50 ms', async () => {
    const { calls, fetch } = platform();
    const proof = new GateAddressProof({
      publicUrl: VIEW.url,
      network: VIEW.network,
      baseDomain: VIEW.base_domain,
      apiUrl: 'http://127.0.0.1:9',
      token: 'xxg_test',
      fetch,
      timeoutMs: 5_000,
      retryMs: 50,
      logger: pino({ level: 'silent' }),
    });
    await proof.start();
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    proof.stop();
    assert.ok(proof.verified?.verified_at, 'the URL is proven and kept');
    // Waits of 50, 100, 200, 400 and 800 ms: six attempts at most in 1.6 s (thirty-two at a fixed 50 ms).
    assert.ok(calls.verify >= 2 && calls.verify <= 7, `verify asked ${calls.verify} times`);
  });
});
