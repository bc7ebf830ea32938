/**
 * The gate's base domain (src/shared/gate-address-schema.ts), as `POST /v1/gate/address` takes it (`base_domain`)
 * and the gate reads GATE_BASE_DOMAIN: a lower-case DNS host name of two labels or more, at most 189 characters (a 63-character slug and its dot under it stay within DNS's 253),
 * no IP literal, no trailing dot, read back by the URL parser as itself; and the host-routed origin built from it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GateConfigError, loadGateConfig } from '../../../src/gate/gate-config.js';
import {
  gateAddressBodySchema,
  gateBaseDomainSchema,
  hostRoutedOrigin,
} from '../../../src/shared/gate-address-schema.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;
const TOKEN = 'xx_pat_gategategategategategategategategate1234';
const label = (n: number) => 'a'.repeat(n);

const ACCEPTED = [
  'gate.test',
  'gate.example.com',
  'a.b',
  'x1.y-2.example',
  'xn--bcher-kva.example',
  `${label(63)}.example`,
  // 189 characters: 2 × 63 + 61 and two dots.
  [label(63), label(63), label(61)].join('.'),
];

const REFUSED = [
  // 190 characters: a 63-character slug under it would be 254, past DNS's 253.
  [label(63), label(63), label(62)].join('.'),
  'localhost',
  'gate',
  'Gate.test',
  'GATE.TEST',
  'gate.test.',
  '.gate.test',
  'gate..test',
  '-gate.test',
  'gate-.test',
  'gate.-test',
  'gate_1.test',
  'gate.test:8443',
  'gate.test/',
  'https://gate.test',
  'user@gate.test',
  '*.gate.test',
  ' gate.test',
  'gate.test ',
  '127.0.0.1',
  '10.0.0.1',
  '127.1',
  '0x7f.0x1',
  'a.0x1f',
  'gate.123',
  '[::1]',
  '::1',
  'bücher.example',
  'xn--a.example',
  `${label(64)}.example`,
  [label(63), label(63), label(63), label(62)].join('.'),
  `${label(300)}.example`,
  '',
];

describe('gate base domain: the shared schema', () => {
  it('takes lower-case DNS host names of two labels or more, up to 189 characters', () => {
    for (const name of ACCEPTED) assert.equal(gateBaseDomainSchema.safeParse(name).success, true, name);
  });

  it('refuses IP literals, single labels, upper case, a trailing dot, ports, paths and bad labels', () => {
    for (const name of REFUSED) assert.equal(gateBaseDomainSchema.safeParse(name).success, false, name);
  });

  it('refuses the hostile-input table', () => {
    for (const value of [...hostile.any!, ...hostile.identifier!, ...hostile.free_text!, ...hostile.outbound_url!])
      assert.equal(gateBaseDomainSchema.safeParse(value).success, false, JSON.stringify(value).slice(0, 60));
  });

  it('is optional in the address body, and checked there', () => {
    const body = { url: 'https://gate.test', network: 'eip155:84532' };
    assert.equal(gateAddressBodySchema.safeParse(body).success, true);
    assert.equal(gateAddressBodySchema.safeParse({ ...body, base_domain: 'gate.test' }).success, true);
    for (const base_domain of ['127.0.0.1', 'localhost', null, 42, 'gate.test.'])
      assert.equal(gateAddressBodySchema.safeParse({ ...body, base_domain }).success, false, String(base_domain));
  });

  it('is what the gate takes as GATE_BASE_DOMAIN (refused at start otherwise)', () => {
    assert.equal(loadGateConfig({ GATE_TOKEN: TOKEN, GATE_BASE_DOMAIN: 'gate.test' }).baseDomain, 'gate.test');
    for (const name of ['localhost', '127.0.0.1', 'gate.test.', 'Gate.test'])
      assert.throws(() => loadGateConfig({ GATE_TOKEN: TOKEN, GATE_BASE_DOMAIN: name }), GateConfigError, name);
  });
});

describe('gate base domain: the host-routed origin', () => {
  it('is <label>.<domain> with the gate URL’s scheme and port, in URL.origin form', () => {
    assert.equal(hostRoutedOrigin('https://gate.test', 'gate.test', 'weather'), 'https://weather.gate.test');
    assert.equal(hostRoutedOrigin('https://gate.test:443', 'gate.test', 'weather'), 'https://weather.gate.test');
    assert.equal(hostRoutedOrigin('http://gate.test:80', 'gate.test', 'weather'), 'http://weather.gate.test');
    assert.equal(hostRoutedOrigin('http://127.0.0.1:8404', 'gate.test', 'w-1'), 'http://w-1.gate.test:8404');
    assert.equal(hostRoutedOrigin('https://gate.test:8443', 'b.gate.test', 'x'), 'https://x.b.gate.test:8443');
  });

  it('is none for a label that is no DNS label, or a URL that is no http(s) origin', () => {
    for (const slug of ['', '-a', 'a-', 'a.b', 'A', 'a_b', 'a/b', 'a:1', label(64), 'xn--a'])
      assert.equal(hostRoutedOrigin('https://gate.test', 'gate.test', slug), undefined, slug);
    assert.equal(hostRoutedOrigin('ftp://gate.test', 'gate.test', 'a'), undefined);
    assert.equal(hostRoutedOrigin('not a url', 'gate.test', 'a'), undefined);
  });
});
