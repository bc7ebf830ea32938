/**
 * The signer gateway's share of the signer's queue (src/api/signing/signer-gateway.ts): a call that is not a
 * payment's waits for its place among `inFlight`, a tenant's an eighth of them at most, tenants served in turn;
 * past 64 of a tenant's waiting 429 `signer_calls_exceeded`, after the longest wait 503 `signer_overloaded`, neither
 * ever sent to the signer; a payment's signature never waits here (the pay admission gave it its place); the
 * Treasury accounts of one owner's agents share the owner's share; calls of no tenant are refused 503, never 429.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SignerClient } from '../../../signer/protocol/signer-client.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { SignerGateway } from '../../../src/api/signing/signer-gateway.js';

/** A signer whose answers the test releases; it records the calls it received, by method and address. */
function heldSigner() {
  const received: string[] = [];
  const pending: Array<() => void> = [];
  const client = {
    call: (method: string, params: { address?: string }) => {
      received.push(`${method} ${params.address ?? ''}`.trim());
      return new Promise((resolve) => pending.push(() => resolve({ current: null, authority: null })));
    },
    close: () => undefined,
  } as unknown as SignerClient;
  return { client, received, releaseAll: () => pending.splice(0).forEach((r) => r()) };
}

const read = (gateway: SignerGateway, tenant: string, address: string) =>
  gateway.call('get_wallet_policy', { address } as never, tenant);

describe('signer gateway: the calls that are not a payment', () => {
  it("wait for their place, a tenant's an eighth of them; the next place goes to another tenant waiting", async () => {
    const signer = heldSigner();
    const gateway = new SignerGateway(signer.client, createTreasuryMetrics(), { inFlight: 8, waitMs: 60_000 });
    const a = Array.from({ length: 3 }, (_, i) => read(gateway, 'acct_a', `a${i}`));
    const b = read(gateway, 'acct_b', 'b0');
    assert.deepEqual(signer.received, ['get_wallet_policy a0', 'get_wallet_policy b0'], 'one of A (8 / 8), then B');
    // A payment's signature is not held back by A's waiting reads.
    void gateway.call('sign_transfer_authorization', { address: 'p0' } as never, 'acct_a');
    assert.equal(signer.received.at(-1), 'sign_transfer_authorization p0');
    signer.releaseAll();
    await sleep(0);
    assert.equal(signer.received.at(-1), 'get_wallet_policy a1');
    for (let i = 0; i < 3; i++) {
      signer.releaseAll();
      await sleep(0);
    }
    await Promise.all([...a, b]);
  });

  it("past a tenant's 64 waiting, 429 signer_calls_exceeded; past the longest wait, 503 signer_overloaded — neither sent", async () => {
    const signer = heldSigner();
    const metrics = createTreasuryMetrics();
    const gateway = new SignerGateway(signer.client, metrics, { inFlight: 8, waitMs: 50 });
    const first = read(gateway, 'acct_a', 'first');
    const waiting = Array.from({ length: 64 }, (_, i) => read(gateway, 'acct_a', `w${i}`).catch((e: unknown) => e));
    const refused = await read(gateway, 'acct_a', 'over').catch((e: unknown) => e);
    assert.ok(refused instanceof AppError);
    assert.deepEqual(
      [refused.code, refused.status, refused.fields, refused.headers],
      [
        'signer_calls_exceeded',
        429,
        { in_flight_max: 1, queue_max: 64, retry_after_seconds: 1 },
        { 'Retry-After': '1' },
      ],
    );
    const lates = (await Promise.all(waiting)) as AppError[];
    assert.ok(lates.every((e) => e instanceof AppError && e.code === 'signer_overloaded'));
    assert.deepEqual([lates[0]!.status, lates[0]!.headers], [503, { 'Retry-After': '1' }]);
    assert.deepEqual(signer.received, ['get_wallet_policy first']);
    signer.releaseAll();
    await first;
    const counted = await metrics.registry.getSingleMetricAsString('treasury_signer_call_refusals_total');
    assert.match(counted, /reason="tenant_queue_full"} 1$/m);
    assert.match(counted, /reason="waited_too_long"} 64$/m);
  });

  it("one owner's agents' Treasury accounts share the owner's share; calls of no tenant are refused 503, never 429", async () => {
    const signer = heldSigner();
    const owners = new Map([
      ['acct_agent1', 'acc_owner'],
      ['acct_agent2', 'acc_owner'],
    ]);
    const gateway = new SignerGateway(signer.client, createTreasuryMetrics(), {
      inFlight: 8,
      waitMs: 60_000,
      tenantOf: (id) => owners.get(id) ?? id,
    });
    const first = read(gateway, 'acct_agent1', 'x1');
    const second = read(gateway, 'acct_agent2', 'x2');
    const other = read(gateway, 'acct_other', 'y1');
    assert.deepEqual(signer.received, ['get_wallet_policy x1', 'get_wallet_policy y1'], 'agent2 waits behind agent1');
    signer.releaseAll();
    await Promise.all([first, other]);
    await sleep(0);
    signer.releaseAll();
    await second;

    const held = Array.from({ length: 65 }, (_, i) =>
      gateway.call('get_wallet_policy', { address: `n${i}` } as never).catch((e: unknown) => e),
    );
    const refused = (await gateway
      .call('get_wallet_policy', { address: 'over' } as never)
      .catch((e: unknown) => e)) as AppError;
    assert.deepEqual([refused.code, refused.status], ['signer_overloaded', 503]);
    for (let i = 0; i < 70; i++) {
      signer.releaseAll();
      await sleep(0);
    }
    await Promise.all(held);
  });
});
