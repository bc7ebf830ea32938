/**
 * facilitator-client: every reply class maps to ok / rejected / unavailable, with an injected fetch —
 * including time-outs, redirects (never followed), 5xx, 4xx with and without a reply body, malformed 2xx
 * bodies and oversize replies.
 */
import assert from 'node:assert/strict';
import { createFacilitatorClient } from '../../../src/x402/facilitator-client.js';
import type { FetchLike } from '../../../src/x402/bounded-fetch.js';
import { startSentinel } from '../../support/timer-order.js';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
const request = { x402Version: 2 as const, paymentPayload: {}, paymentRequirements: {} };
const TX = `0x${'ef'.repeat(32)}`;

function client(reply: (url: string, init: RequestInit) => Promise<Response> | Response, timeoutMs = 200) {
  const seen: Array<{ url: string; init: RequestInit }> = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push({ url, init });
    return reply(url, init);
  };
  return {
    seen,
    c: createFacilitatorClient({
      url: 'http://facilitator.test/base/',
      fetch,
      verifyTimeoutMs: timeoutMs,
      settleTimeoutMs: timeoutMs,
      supportedTimeoutMs: timeoutMs,
    }),
  };
}

describe('facilitator client', () => {
  it('verify: ok, rejected (200 and 4xx with a reply), unavailable (5xx, bare 4xx, malformed, redirect)', async () => {
    assert.deepEqual(await client(() => json(200, { isValid: true, payer: '0xabc' })).c.verify(request), {
      kind: 'ok',
      payer: '0xabc',
    });
    const rejected = await client(() =>
      json(200, { isValid: false, invalidReason: 'invalid_exact_evm_signature' }),
    ).c.verify(request);
    assert.equal(rejected.kind, 'rejected');
    assert.equal(rejected.kind === 'rejected' && rejected.reason, 'invalid_exact_evm_signature');
    assert.equal(
      (await client(() => json(400, { isValid: false, invalidReason: 'x' })).c.verify(request)).kind,
      'rejected',
    );
    assert.equal((await client(() => json(400, { error: 'bad request' })).c.verify(request)).kind, 'unavailable');
    assert.equal((await client(() => json(502, { isValid: true })).c.verify(request)).kind, 'unavailable');
    assert.equal((await client(() => json(200, 'not json')).c.verify(request)).kind, 'unavailable');
    assert.equal((await client(() => json(200, { isValid: 'yes' })).c.verify(request)).kind, 'unavailable');
    assert.equal((await client(() => json(200, '')).c.verify(request)).kind, 'unavailable');
    const redirected = await client(
      () => new Response(null, { status: 308, headers: { location: 'https://elsewhere.test/verify' } }),
    ).c.verify(request);
    assert.deepEqual(redirected, { kind: 'unavailable', cause: 'redirect (308) refused' });
  });

  it('posts JSON to {url}/verify and {url}/settle without following redirects', async () => {
    const { seen, c } = client(() => json(200, { success: true, transaction: TX, network: 'eip155:84532' }));
    await c.settle(request);
    assert.equal(seen[0]!.url, 'http://facilitator.test/base/settle');
    assert.equal(seen[0]!.init.method, 'POST');
    assert.equal(seen[0]!.init.redirect, 'manual');
    assert.deepEqual(JSON.parse(String(seen[0]!.init.body)), request);
  });

  it('settle: both success shapes are ok; success:false is rejected; success without a hash is unavailable', async () => {
    const a = await client(() => json(200, { success: true, txHash: TX })).c.settle(request);
    assert.equal(a.kind === 'ok' && a.settlement.transaction, TX);
    const b = await client(() => json(200, { success: true, transaction: TX, network: 'eip155:84532' })).c.settle(
      request,
    );
    assert.equal(b.kind === 'ok' && b.settlement.network, 'eip155:84532');
    const c = await client(() =>
      json(200, { success: false, errorReason: 'insufficient_funds', transaction: '', network: 'eip155:84532' }),
    ).c.settle(request);
    assert.equal(c.kind === 'rejected' && c.reason, 'insufficient_funds');
    assert.equal((await client(() => json(200, { success: true })).c.settle(request)).kind, 'unavailable');
    assert.equal((await client(() => json(201, { success: true, transaction: TX })).c.settle(request)).kind, 'ok');
    assert.equal(
      (await client(() => json(500, { success: true, transaction: TX })).c.settle(request)).kind,
      'unavailable',
    );
  });

  it('a hanging facilitator is unavailable after the time-out; so is a network error', async () => {
    const hanging = client(
      (_url, init) =>
        new Promise<Response>((_resolve, reject) =>
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason)),
        ),
      50,
    );
    // Bounded by the client's own 50 ms timer: the outcome comes before a 1 s timer started with it has fired,
    // an order that holds however late a loaded machine runs both (test/support/timer-order.ts).
    const sentinel = startSentinel(1_000);
    const outcome = await hanging.c.verify(request).finally(() => sentinel.clear());
    assert.equal(outcome.kind, 'unavailable');
    assert.match(outcome.kind === 'unavailable' ? outcome.cause : '', /timed out/);
    assert.equal(sentinel.fired, false, 'unavailable only after a 1 s timer: not bounded by the 50 ms time-out');
    const down = await client(() =>
      Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') })),
    ).c.settle(request);
    assert.equal(down.kind, 'unavailable');
  });

  it('an oversize reply is unavailable', async () => {
    const huge = { isValid: true, padding: 'x'.repeat(100_000) };
    assert.equal((await client(() => json(200, huge)).c.verify(request)).kind, 'unavailable');
  });

  it('supported: parses kinds, refuses malformed replies', async () => {
    const ok = await client(() =>
      json(200, {
        kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }],
        extensions: [],
        signers: { 'eip155:*': ['0x1'] },
      }),
    ).c.supported();
    assert.equal(ok.kind === 'ok' && ok.supported.kinds[0]!.scheme, 'exact');
    assert.equal((await client(() => json(200, { kinds: 'all' })).c.supported()).kind, 'unavailable');
    assert.equal((await client(() => json(404, { kinds: [] })).c.supported()).kind, 'unavailable');
  });
});
