/**
 * The challenge-origin binding of a managed-proxy seller's payee at its gate's host-routed name
 * (src/api/pay/challenge-origin-binding.ts): `<slug>.<base domain>` with the gate URL's scheme and port joins the
 * seller's origins only when the gate's base domain is verified (and its URL), and only for a slug that is a DNS
 * label; another owner's slug or an unverified domain binds nothing there.
 */
import assert from 'node:assert/strict';
import {
  challengeOriginAllowed,
  payeeBinding,
  type PayeeOwner,
} from '../../../src/api/pay/challenge-origin-binding.js';

/** A verified `mpp` seller `weather` on a gate at https://gate.example with base domain gate.example, verified. */
function owner(overrides: Partial<PayeeOwner> = {}): PayeeOwner {
  return {
    sellerId: 'sel_000000000000000000000001',
    protocol: 'mpp',
    origin: 'https://weather-origin.example',
    originVerified: true,
    gateUrl: 'https://gate.example',
    gateVerified: true,
    slug: 'weather',
    gateBaseDomain: 'gate.example',
    gateBaseDomainVerified: true,
    ...overrides,
  };
}

const originsOf = (owners: PayeeOwner[]) => {
  const binding = payeeBinding(owners, false);
  assert.equal(binding.kind, 'bound', JSON.stringify(binding));
  return binding.kind === 'bound' ? binding.origins : [];
};

describe('challenge origin binding: a gate seller at its host-routed name', () => {
  it('a verified base domain adds <slug>.<base> with the gate URL’s scheme (default port elided)', () => {
    assert.deepEqual(originsOf([owner()]), [
      'https://gate.example',
      'https://weather-origin.example',
      'https://weather.gate.example',
    ]);
    const binding = payeeBinding([owner()], false);
    assert.ok(challengeOriginAllowed(binding, 'https://weather.gate.example'));
    assert.ok(!challengeOriginAllowed(binding, 'http://weather.gate.example'), 'another scheme');
    assert.ok(!challengeOriginAllowed(binding, 'https://weather.gate.example:8443'), 'another port');
    assert.ok(!challengeOriginAllowed(binding, 'https://other.gate.example'), 'another slug');
    assert.ok(!challengeOriginAllowed(binding, 'https://x.weather.gate.example'), 'a deeper name');
  });

  it('the gate URL’s port is the host-routed name’s; an explicit default port is elided', () => {
    assert.ok(originsOf([owner({ gateUrl: 'http://gate.example:8404' })]).includes('http://weather.gate.example:8404'));
    assert.ok(originsOf([owner({ gateUrl: 'https://gate.example:443' })]).includes('https://weather.gate.example'));
    assert.ok(originsOf([owner({ gateUrl: 'http://127.0.0.1:8404' })]).includes('http://weather.gate.example:8404'));
  });

  it('an unverified base domain, or none, adds nothing: the host-routed name stays refused', () => {
    for (const o of [owner({ gateBaseDomainVerified: false }), owner({ gateBaseDomain: null })]) {
      const binding = payeeBinding([o], false);
      assert.deepEqual(binding.kind === 'bound' && binding.origins, [
        'https://gate.example',
        'https://weather-origin.example',
      ]);
      assert.ok(!challengeOriginAllowed(binding, 'https://weather.gate.example'));
    }
  });

  it('an unverified gate URL leaves the owner unplaced whatever its base domain says', () => {
    assert.deepEqual(payeeBinding([owner({ gateVerified: false })], false), {
      kind: 'unbound',
      reason: 'owner_unplaced',
    });
  });

  it('a slug that is no DNS label gets no host-routed name', () => {
    for (const slug of ['ends-', '-starts', 'a.b', 'UPPER', '', 'a_b', `${'a'.repeat(64)}`, 'xn--a', null]) {
      const origins = originsOf([owner({ slug })]);
      assert.deepEqual(origins, ['https://gate.example', 'https://weather-origin.example'], String(slug));
    }
    assert.ok(originsOf([owner({ slug: 'a-1' })]).includes('https://a-1.gate.example'));
    assert.ok(originsOf([owner({ slug: 'a'.repeat(63) })]).includes(`https://${'a'.repeat(63)}.gate.example`));
  });

  it('a middleware (x402) seller gets no gate names, whatever its row says', () => {
    assert.deepEqual(originsOf([owner({ protocol: 'x402' })]), ['https://weather-origin.example']);
  });

  it('each owner adds its own slug only: two owners of one payee, one with a verified domain', () => {
    const origins = originsOf([
      owner(),
      owner({
        sellerId: 'sel_000000000000000000000002',
        slug: 'maps',
        gateUrl: 'https://other-gate.example',
        gateBaseDomain: 'other-gate.example',
        gateBaseDomainVerified: false,
        origin: null,
        originVerified: false,
      }),
    ]);
    assert.deepEqual(origins, [
      'https://gate.example',
      'https://other-gate.example',
      'https://weather-origin.example',
      'https://weather.gate.example',
    ]);
  });
});
