/**
 * vettedGet (src/api/net/vetted-fetch.ts) resolves tenants' host names over DNS (src/api/net/dns-resolver.ts)
 * when only global addresses are allowed: against a loopback nameserver that never answers some names (a dead
 * zone), the lookups of those names hold no slot past their deadline, and another tenant's name, asked while
 * they are in flight, is answered at once instead of waiting behind them. The names the nameserver answers
 * resolve to 127.0.0.1, which the vetting refuses (`address_refused`), so nothing connects anywhere.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFakeDnsServer, type FakeDnsServer } from '../../support/fake-dns-server.js';
import { dnsResolver } from '../../../src/api/net/dns-resolver.js';
import { LookupSlots } from '../../../src/api/net/lookup-slots.js';
import { OutboundError, vettedGet } from '../../../src/api/net/vetted-fetch.js';

const refusedWith = (reason: string) => (e: unknown) => e instanceof OutboundError && e.reason === reason;

describe('vettedGet over DNS', () => {
  let dns: FakeDnsServer;
  before(async () => {
    dns = await startFakeDnsServer({ 'live.test': '127.0.0.1', 'other.test': '127.0.0.2' });
  });
  after(() => dns.close());

  it("answers one tenant's name while another's dead-zone lookups are in flight", async () => {
    const settled: string[] = [];
    const dead = Array.from({ length: 8 }, (_, i) => `dead${i}.test`).map((host) =>
      vettedGet(new URL(`http://${host}/`), {
        allowPrivate: false,
        dnsServers: [dns.server],
        timeoutMs: 1_500,
        maxBytes: 100,
      }).finally(() => settled.push(host)),
    );
    while ((dns.queries.get('dead7.test') ?? 0) === 0) await sleep(5); // every dead lookup is in flight
    await assert.rejects(
      vettedGet(new URL('http://live.test/'), { allowPrivate: false, dnsServers: [dns.server], maxBytes: 100 }),
      refusedWith('address_refused'),
    );
    assert.deepEqual(settled, [], 'the live name was answered before any dead lookup ended');
    for (const call of dead) await assert.rejects(call, refusedWith('timeout'));
  });

  it('frees a dead lookup’s slot at its deadline: the lookup is cancelled, not left running', async () => {
    const slots = new LookupSlots(1);
    const policy = { allowPrivate: false, dnsServers: [dns.server], lookupSlots: slots, maxBytes: 100 };
    await assert.rejects(
      vettedGet(new URL('http://dead.test/'), { ...policy, timeoutMs: 300 }),
      refusedWith('timeout'),
    );
    // The one slot is free again right after the deadline: the next name gets it and is answered.
    while (slots.inFlight > 0) await sleep(5);
    await assert.rejects(
      vettedGet(new URL('http://other.test/'), { ...policy, timeoutMs: 5_000 }),
      refusedWith('address_refused'),
    );
    assert.deepEqual([slots.inFlight, slots.queued], [0, 0]);
  });

  it('answers every address of both families, and refuses a name with none', async () => {
    const resolve = dnsResolver({ servers: [dns.server] });
    assert.deepEqual(await resolve('live.test'), [{ address: '127.0.0.1', family: 4 }]);
    await assert.rejects(resolve('gone.test', AbortSignal.timeout(300)));
    // RFC 6761: localhost names are loopback without asking, so the vetting refuses them as before.
    assert.deepEqual(
      (await resolve('api.LOCALHOST.')).map((a) => a.address),
      ['127.0.0.1', '::1'],
    );
    await assert.rejects(
      vettedGet(new URL('http://localhost/'), { allowPrivate: false, dnsServers: [dns.server], maxBytes: 100 }),
      refusedWith('address_refused'),
    );
  });
});
