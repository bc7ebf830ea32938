/**
 * The KMS emulator's injected faults, each observed through the real @aws-sdk/client-kms the way a
 * backend will meet it: ThrottlingException (400, retried by the SDK, and a token-bucket quota that
 * refuses what exceeds it), KMSInternalException (500) and DependencyTimeoutException (503), both
 * server faults the SDK retries; AccessDeniedException (not retried); a stall that only a client-side
 * deadline ends (NodeHttpHandler requestTimeout with throwOnRequestTimeout, or an abortSignal), whose
 * operation never runs when stalled "before" and has run when stalled "after"; dropped connections;
 * an unreachable emulator (connections reset, or refused) that comes back on the same URL; and the
 * same faults set over the control endpoint. The counters tell how many attempts arrived and how many
 * signatures were produced, so "none signed twice" can be proved.
 */
import assert from 'node:assert/strict';
import { ListKeysCommand, SignCommand } from '@aws-sdk/client-kms';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createSigningKey, digestOf, kmsClient, kmsFailure, useKmsEmulatorClient } from './kms-emulator-test-client.js';

const signCommand = (keyId: string, label: string) =>
  new SignCommand({ KeyId: keyId, Message: digestOf(label), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });

describe('KMS emulator: injected faults through the real AWS SDK', function () {
  const { kms, client } = useKmsEmulatorClient();
  let keyId: string;

  before(async () => {
    keyId = (await createSigningKey(client)).keyId;
  });
  beforeEach(() => {
    kms.faults.reset();
    kms.stats.reset();
  });

  it('throttle: ThrottlingException (400, client fault) by name; a retrying client gets through after the throttled attempts, signed once', async () => {
    kms.faults.throttle({ count: 1, operations: ['Sign'] });
    const failure = await kmsFailure(client.send(signCommand(keyId, 't1')));
    assert.equal(failure.name, 'ThrottlingException');
    assert.equal(failure.status, 400);
    assert.equal(
      failure.message,
      'You have exceeded the rate at which you may call KMS. Reduce the frequency of your calls.',
    );
    assert.equal(kms.stats.timesSigned(digestOf('t1')), 0);

    kms.faults.throttle({ count: 2, operations: ['Sign'] });
    const retrying = kmsClient(kms, { retries: 3 });
    const out = await retrying.send(signCommand(keyId, 't2'));
    retrying.destroy();
    assert.equal(out.$metadata.attempts, 3);
    assert.equal(kms.stats.received('Sign'), 4, 'one refused attempt, then two throttled and one served');
    assert.equal(kms.stats.errors('Sign', 'ThrottlingException'), 3);
    assert.equal(kms.stats.injected('throttle'), 3);
    assert.equal(kms.stats.timesSigned(digestOf('t2')), 1);
    assert.equal(kms.stats.errors('ListKeys'), 0);
  });

  it('throttle a fraction: roughly that share of requests refused', async () => {
    kms.faults.throttle({ fraction: 0.5, operations: ['Sign'] });
    let throttled = 0;
    for (let i = 0; i < 40; i++) {
      try {
        await client.send(signCommand(keyId, `f${i}`));
      } catch (err) {
        assert.equal((err as Error).name, 'ThrottlingException');
        throttled++;
      }
    }
    assert.ok(throttled > 5 && throttled < 35, `${throttled}/40 throttled`);
    assert.equal(kms.stats.snapshot().signatures, 40 - throttled);
  });

  it('rate limit: a token bucket (burst 5, 1 a second) lets 5 of 20 concurrent Signs through and throttles the rest; it refills', async () => {
    kms.faults.rateLimit({ perSecond: 1, burst: 5 });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => client.send(signCommand(keyId, `r${i}`))),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const names = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).name] : []));
    assert.equal(ok, 5);
    assert.deepEqual(new Set(names), new Set(['ThrottlingException']));
    assert.equal(kms.stats.injected('rate_limit'), 15);
    await client.send(new ListKeysCommand({}));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await client.send(signCommand(keyId, 'refilled'));
  });

  it('fail: 500 KMSInternalException and 503 DependencyTimeoutException are server faults the SDK retries', async () => {
    kms.faults.fail({ count: 1 });
    const internal = await kmsFailure(client.send(signCommand(keyId, 'f500')));
    assert.deepEqual([internal.name, internal.status, internal.fault], ['KMSInternalException', 500, 'server']);
    kms.faults.fail({ count: 1, status: 503 });
    const timeout = await kmsFailure(client.send(signCommand(keyId, 'f503')));
    assert.deepEqual([timeout.name, timeout.status, timeout.fault], ['DependencyTimeoutException', 503, 'server']);
    kms.faults.fail({ count: 2, operations: ['Sign'] });
    const retrying = kmsClient(kms, { retries: 2 });
    assert.equal((await retrying.send(signCommand(keyId, 'after 500s'))).$metadata.attempts, 3);
    retrying.destroy();
  });

  it('deny: AccessDeniedException, not retried', async () => {
    kms.faults.deny({ operations: ['Sign'] });
    const retrying = kmsClient(kms, { retries: 3 });
    const denied = await kmsFailure(retrying.send(signCommand(keyId, 'deny')));
    retrying.destroy();
    assert.equal(denied.name, 'AccessDeniedException');
    assert.equal(denied.attempts, 1);
    assert.match(denied.message, /kms:Sign/);
  });

  it('stall "before": the SDK requestTimeout (throwOnRequestTimeout) ends the call with TimeoutError; released later, the abandoned Sign never runs', async () => {
    kms.faults.stall({ operations: ['Sign'] });
    const timed = kmsClient(kms, {
      requestHandler: new NodeHttpHandler({ requestTimeout: 300, throwOnRequestTimeout: true }),
    });
    const started = Date.now();
    const failure = await kmsFailure(timed.send(signCommand(keyId, 'stalled')));
    timed.destroy();
    assert.equal(failure.name, 'TimeoutError');
    assert.ok(Date.now() - started < 3000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    kms.faults.reset();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(kms.stats.received('Sign'), 1);
    assert.equal(kms.stats.timesSigned(digestOf('stalled')), 0, 'the client went away before the operation ran');
  });

  it('stall "after": the Sign ran (the digest is signed) but the answer never came: an abortSignal deadline ends the call', async () => {
    kms.faults.stall({ operations: ['Sign'], phase: 'after' });
    const failure = await kmsFailure(
      client.send(signCommand(keyId, 'signed, answer lost'), { abortSignal: AbortSignal.timeout(300) }),
    );
    assert.equal(failure.name, 'AbortError');
    assert.equal(kms.stats.timesSigned(digestOf('signed, answer lost')), 1, 'the may-have-succeeded case');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(kms.faults.describe().stalledRequests, 0, 'the held answer is dropped with its connection');
  });

  it('stall with ms: the answer comes late but comes', async () => {
    kms.faults.stall({ ms: 200, count: 1 });
    const started = Date.now();
    await client.send(signCommand(keyId, 'late'));
    assert.ok(Date.now() - started >= 190);
  });

  it('drop "before" and "after": the connection dies without an answer; only "after" has signed', async () => {
    kms.faults.drop({ count: 1, operations: ['Sign'] });
    const before = await kmsFailure(client.send(signCommand(keyId, 'drop before')));
    assert.ok(
      ['ECONNRESET', 'EPIPE'].includes(before.code ?? '') || /socket hang up/.test(before.message),
      `${before.name}: ${before.message}`,
    );
    assert.equal(kms.stats.timesSigned(digestOf('drop before')), 0);
    kms.faults.drop({ count: 1, operations: ['Sign'], phase: 'after' });
    await kmsFailure(client.send(signCommand(keyId, 'drop after')));
    assert.equal(kms.stats.timesSigned(digestOf('drop after')), 1);
    await client.send(signCommand(keyId, 'after the drops'));
  });

  it('unreachable: connections reset, or refused; back on the same URL once reachable', async () => {
    kms.faults.unreachable('reset');
    const reset = await kmsFailure(client.send(new ListKeysCommand({})));
    assert.ok(
      ['ECONNRESET', 'EPIPE'].includes(reset.code ?? '') || /socket hang up/.test(reset.message),
      `${reset.name}: ${reset.message}`,
    );
    kms.faults.unreachable('refuse');
    const fresh = kmsClient(kms);
    const refused = await kmsFailure(fresh.send(new ListKeysCommand({})));
    assert.equal(refused.code, 'ECONNREFUSED', `${refused.name}: ${refused.message}`);
    kms.faults.reachable();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok((await fresh.send(new ListKeysCommand({}))).Keys);
    fresh.destroy();
  });

  it('the control endpoint sets the same faults from another process and reports the counts', async () => {
    const post = (body: unknown) =>
      fetch(`${kms.url}/__emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post({ mode: 'throttle', count: 1, operations: ['Sign'] })).status, 200);
    assert.equal((await kmsFailure(client.send(signCommand(keyId, 'c1')))).name, 'ThrottlingException');
    assert.equal((await post({ mode: 'rate_limit', perSecond: 1000 })).status, 200);
    assert.equal((await post({ mode: 'explode' })).status, 400);
    assert.equal((await post({ mode: 'throttle', count: -1 })).status, 400);
    const faults = (await (await fetch(`${kms.url}/__emulator/faults`)).json()) as {
      rateLimit?: { perSecond: number };
    };
    assert.equal(faults.rateLimit?.perSecond, 1000);
    await post({ mode: 'unreachable', durationMs: 1500 });
    assert.equal(
      (await fetch(`${kms.url}/__emulator/health`)).status,
      200,
      'the control endpoint still answers while KMS requests are reset',
    );
    await kmsFailure(client.send(new ListKeysCommand({})));
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await client.send(signCommand(keyId, 'c2'));
    const stats = (await (await fetch(`${kms.url}/__emulator/stats`)).json()) as {
      received: Record<string, number>;
      signatures: number;
      errors: Record<string, Record<string, number>>;
    };
    assert.equal(stats.received['Sign'], 2);
    assert.equal(stats.errors['Sign']?.['ThrottlingException'], 1);
    assert.equal(stats.signatures, 1);
    assert.equal((await fetch(`${kms.url}/__emulator/faults`, { method: 'DELETE' })).status, 200);
    assert.deepEqual(kms.faults.describe().rules, []);
  });
});
