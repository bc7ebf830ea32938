/**
 * The gate address routes (POST /v1/gate/address, POST /v1/gate/address/verify) against the hostile-input
 * table, through HTTP and PostgreSQL with private addresses refused (TREASURY_VERIFY_ALLOW_PRIVATE=0): every
 * value that is no bare http(s) origin is refused at the schema (400, nothing stored); an origin the schema
 * takes but the outbound rules refuse (loopback, link-local, NAT64, private, a port other than 80/443) is stored
 * unproven and its verification refused with a stable 422 — never fetched, never verified, never listed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;
const NETWORK = 'eip155:84532';
const FREE_TEXT = (hostile.free_text as string[]).filter((v) => !v.startsWith('='));

/** Well-formed URLs that are not a bare origin: a path, a query, a fragment, credentials, another scheme. */
const NOT_AN_ORIGIN = [
  'https://gate.example/prefix',
  'https://gate.example/?q=1',
  'https://gate.example/#top',
  'https://gate.example?',
  'https://user@gate.example',
  'ftp://gate.example',
  'javascript:alert(1)',
  'https://gate.example/%2e%2e/',
  ` https://gate.example`,
  `https://${'a'.repeat(2040)}.example`,
];

describe('gate address: hostile URLs refused at the schema or by the outbound rules', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_VERIFY_ALLOW_PRIVATE: '0' } });

  it('refuses every hostile value, stores nothing refused, verifies nothing', async () => {
    const owner = await signInWithNewKey(t);
    const token = (await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'gate' } })).body
      .pat as string;
    const schemaRefused = [
      ...hostile.any!,
      ...hostile.identifier!,
      ...FREE_TEXT.map((v) => `https://gate.example/${v}`),
      ...FREE_TEXT.map((v) => `https://gate${v}.example`),
      ...NOT_AN_ORIGIN,
    ];
    for (const url of schemaRefused) {
      const res = await t.request('POST', '/v1/gate/address', { token, body: { url, network: NETWORK } });
      assert.equal(res.status, 400, `${JSON.stringify(url).slice(0, 80)} → ${res.status}`);
      assert.ok(res.body.error_code in ERROR_CODES);
    }
    for (const network of [...hostile.any!, ...hostile.identifier!, ...hostile.caip2_network!, 'solana:x']) {
      const body = { url: 'https://gate.example', network };
      assert.equal((await t.request('POST', '/v1/gate/address', { token, body })).status, 400, String(network));
    }
    const extra = { url: 'https://gate.example', network: NETWORK, more: 1 };
    assert.equal((await t.request('POST', '/v1/gate/address', { token, body: extra })).status, 400);
    assert.deepEqual(await t.db.knex('gate_addresses').select('account_id'), [], 'nothing stored');

    for (const url of hostile.outbound_url as string[]) {
      const set = await t.request('POST', '/v1/gate/address', { token, body: { url, network: NETWORK } });
      if (set.status === 400) continue; // not an http(s) origin (file:, gopher:, credentials, a path)
      assert.equal(set.status, 200, `${url} → ${set.status} ${JSON.stringify(set.body)}`);
      assert.equal(set.body.verified_at, null);
      const verify = await t.request('POST', '/v1/gate/address/verify', { token });
      assert.equal(verify.status, 422, `${url} → ${verify.status} ${JSON.stringify(verify.body)}`);
      assert.ok(['origin_not_public', 'origin_port_refused'].includes(verify.body.error_code), url);
    }
    const verified = await t.db.knex('gate_addresses').whereNotNull('verified_at').count({ n: '*' });
    assert.equal(Number(verified[0]!.n), 0, 'no hostile address verified');
  });

  it('answers gate_address_not_set before an address is named', async () => {
    const owner = await signInWithNewKey(t);
    const token = (await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'gate' } })).body
      .pat as string;
    for (const [method, route] of [
      ['GET', '/v1/gate/address'],
      ['POST', '/v1/gate/address/verify'],
    ] as const) {
      const res = await t.request(method, route, { token });
      assert.equal(res.status, 409);
      assert.equal(res.body.error_code, 'gate_address_not_set');
    }
  });
});
