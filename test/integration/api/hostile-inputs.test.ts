/**
 * The hostile-input table (test/vectors/hostile-inputs.json) thrown at every route schema of the custody
 * core: each value answers a 4xx with a stable error code, and the database is unchanged afterwards.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { mintAgent, useTestTreasury } from '../../support/api-harness.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;
const VALID_ADDRESS = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
/**
 * Text every stored string field must refuse: control characters (C0, DEL, C1), lone surrogates, bidi
 * overrides, over-long values. A formula-looking value is well-formed text and is stored as given.
 */
const FREE_TEXT = (hostile.free_text as string[]).filter((v) => !v.startsWith('='));
/** Just above the largest amount any field takes (10^9 USD): valid spellings the columns could hold, refused all the same. */
const USD_ABOVE_BOUND = ['1000000000.000001', '9223372036854.775807'];
const RAW_ABOVE_BOUND = ['1000000000000001', '9223372036854775807'];

describe('hostile inputs against the custody routes', function () {
  this.timeout(300_000);
  const t = useTestTreasury();
  let token: string;
  let accountId: string;
  let walletId: string;

  before(async () => {
    ({ apiKey: token, accountId } = await mintAgent(t, 'hostile'));
    walletId = (await t.request('POST', '/v1/wallets', { token, body: { label: 'target' } })).body.id;
  });

  async function snapshot() {
    const counts: Record<string, number> = {};
    for (const table of [
      'treasury_accounts',
      'api_tokens',
      'wallets',
      'wallet_keys',
      'audit_events',
      'authorizations',
      'policy_decisions',
      'wallet_spend_totals',
    ]) {
      counts[table] = Number((await t.db.knex(table).count({ n: '*' }))[0]!.n);
    }
    const wallet = await t.db.knex('wallets').where({ id: walletId }).first();
    return { counts, wallet: JSON.stringify(wallet) };
  }

  async function expectRefused(
    method: string,
    route: string,
    body: unknown,
    opts: { raw?: boolean; token?: string } = {},
  ) {
    const res = await t.request(method, route, {
      token: opts.token ?? token,
      ...(opts.raw ? { rawBody: body as string } : { body }),
    });
    const label = `${method} ${route} ${String(JSON.stringify(body)).slice(0, 80)}`;
    assert.ok(res.status >= 400 && res.status < 500, `${label} answered ${res.status}`);
    assert.ok(
      typeof res.body?.error_code === 'string' && res.body.error_code in ERROR_CODES,
      `${label} has no stable error_code: ${JSON.stringify(res.body).slice(0, 200)}`,
    );
    assert.equal(typeof res.body.user_message, 'string');
    return res;
  }

  it('POST /v1/treasury refuses hostile owner_type / owner_id values and changes nothing', async () => {
    const before = await snapshot();
    for (const value of [
      ...hostile.any!,
      ...hostile.identifier!.filter((v) => typeof v === 'string' && !/^[a-z][a-z0-9_]{0,31}$/.test(v)),
    ]) {
      await expectRefused('POST', '/v1/treasury', { owner_type: value, owner_id: 'x' }, { token: t.adminToken });
    }
    for (const value of [...hostile.any!, ...FREE_TEXT])
      await expectRefused('POST', '/v1/treasury', { owner_type: 'agent', owner_id: value }, { token: t.adminToken });
    assert.deepEqual(await snapshot(), before);
  });

  it('POST /v1/wallets refuses hostile labels, chains and policy values and changes nothing', async () => {
    const before = await snapshot();
    for (const value of hostile.any!) {
      await expectRefused('POST', '/v1/wallets', { label: value });
      await expectRefused('POST', '/v1/wallets', { chain: value });
      if (!(value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
        await expectRefused('POST', '/v1/wallets', { policy: value });
      }
    }
    // `chain` also accepts configured short names, so the table's 'base-sepolia' is a valid chain here.
    for (const value of hostile.caip2_network!.filter((v) => v !== 'base-sepolia'))
      await expectRefused('POST', '/v1/wallets', { chain: value });
    for (const value of FREE_TEXT) await expectRefused('POST', '/v1/wallets', { label: value });
    for (const value of [...hostile.usd_amount!, ...USD_ABOVE_BOUND]) {
      for (const rule of ['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd']) {
        await expectRefused('POST', '/v1/wallets', { policy: { [rule]: value } });
      }
      if (value !== '0')
        await expectRefused('POST', '/v1/wallets', { policy: { capability_cap_usd: { search: value } } }); // "0" forbids a capability
    }
    for (const value of hostile.evm_address!.filter((a) => a !== '0x0000000000000000000000000000000000000000')) {
      await expectRefused('POST', '/v1/wallets', { policy: { counterparty_allowlist: [value] } });
      await expectRefused('POST', '/v1/wallets', { policy: { counterparty_blocklist: [VALID_ADDRESS, value] } });
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('POST /v1/treasuries/{id}/pats refuses hostile labels and lifetimes', async () => {
    const before = await snapshot();
    for (const value of [...hostile.any!, ...FREE_TEXT]) {
      await expectRefused('POST', `/v1/treasuries/${accountId}/pats`, { label: value });
      await expectRefused('POST', `/v1/treasuries/${accountId}/pats`, { expires_in_seconds: value });
    }
    for (const value of hostile.unix_seconds!)
      await expectRefused('POST', `/v1/treasuries/${accountId}/pats`, { expires_in_seconds: value });
    assert.deepEqual(await snapshot(), before);
  });

  it('POST /v1/wallets/{id}/pay refuses hostile payment terms and capabilities, signing and recording nothing', async () => {
    const good = {
      scheme: 'exact',
      network: 'eip155:84532',
      payTo: VALID_ADDRESS,
      amount: '1000',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      extra: { name: 'USDC', version: '2' },
      maxTimeoutSeconds: 60,
    };
    const before = await snapshot();
    const route = `/v1/wallets/${walletId}/pay`;
    const fields: Record<string, unknown[]> = {
      scheme: hostile.any!,
      network: [...hostile.any!, ...hostile.caip2_network!],
      payTo: [...hostile.any!, ...hostile.evm_address!],
      asset: [
        ...hostile.any!,
        ...hostile.evm_address!.filter((a) => a !== '0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
      ],
      amount: [
        ...hostile.any!,
        ...hostile.raw_token_amount!,
        ...hostile.raw_amount_over_bigint!,
        ...RAW_ABOVE_BOUND,
        '0',
      ],
      maxTimeoutSeconds: [...hostile.any!, ...hostile.unix_seconds!],
      extra: hostile.any!.filter((v) => v !== null && !(typeof v === 'object' && !Array.isArray(v))),
      // Stored with the authorization and in its audit row (resource), or carried along (description, mimeType).
      resource: FREE_TEXT,
      description: FREE_TEXT.filter((v) => !/^[^\u0000-\u001f]*\r\n[^\u0000-\u001f]*$/.test(v)), // prose may span lines
      mimeType: FREE_TEXT,
    };
    for (const [field, values] of Object.entries(fields)) {
      for (const value of values)
        await expectRefused('POST', route, { payment_requirements: { ...good, [field]: value } });
    }
    for (const value of [...hostile.any!, ...hostile.identifier!]) {
      await expectRefused('POST', route, { payment_requirements: good, capability: value });
      await expectRefused('POST', route, { payment_requirements: value });
    }
    await expectRefused('POST', route, { payment_requirements: good, extra_field: 1 });
    // Fields the schema lets through unchecked (x402 entries grow new optional fields) still carry no NUL or
    // lone surrogate, in values or keys.
    for (const value of ['\u0000', 'a\u0000b', '\ud800', 'x\udfffy']) {
      await expectRefused('POST', route, { payment_requirements: { ...good, outputSchema: { nested: [value] } } });
      await expectRefused('POST', route, { payment_requirements: { ...good, extra: { ...good.extra, [value]: 1 } } });
    }
    // The EIP-712 domain the signer signs under.
    for (const value of FREE_TEXT) {
      await expectRefused('POST', route, { payment_requirements: { ...good, extra: { name: value, version: '2' } } });
      await expectRefused('POST', route, {
        payment_requirements: { ...good, extra: { name: 'USDC', version: value } },
      });
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('transfer, policy and evaluate routes refuse hostile values and change nothing', async () => {
    const before = await snapshot();
    for (const value of [...hostile.any!, ...hostile.evm_address!]) {
      await expectRefused('POST', `/v1/wallets/${walletId}/transfer`, { to: value, amount_usd: '1' });
      await expectRefused('POST', `/v1/wallets/${walletId}/policy/evaluate`, { to: value, amount_usd: '1' });
    }
    for (const value of [...hostile.any!, ...hostile.usd_amount!, ...USD_ABOVE_BOUND]) {
      await expectRefused('POST', `/v1/wallets/${walletId}/transfer`, { to: VALID_ADDRESS, amount_usd: value });
      await expectRefused('POST', `/v1/wallets/${walletId}/policy/evaluate`, { to: VALID_ADDRESS, amount_usd: value });
      if (!(value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
        await expectRefused('PUT', `/v1/wallets/${walletId}/policy`, value);
      }
      await expectRefused('PUT', `/v1/wallets/${walletId}/policy`, { per_tx_cap_usd: value });
    }
    for (const value of [...hostile.any!, ...hostile.unix_seconds!]) {
      await expectRefused('POST', `/v1/wallets/${walletId}/transfer`, {
        to: VALID_ADDRESS,
        amount_usd: '1',
        valid_for_seconds: value,
      });
    }
    const settlement = `/v1/wallets/${walletId}/authorizations/auth_${'0'.repeat(24)}/settlement`;
    for (const value of [...hostile.any!, ...hostile.bytes32_hex!, ...hostile.identifier!])
      await expectRefused('POST', settlement, { transaction: value });
    for (const id of hostile.identifier as string[]) {
      await expectRefused('POST', `/v1/wallets/${walletId}/authorizations/${encodeURIComponent(id)}/settlement`, {
        transaction: `0x${'ab'.repeat(32)}`,
      });
    }
    for (const raw of hostile.raw_bodies as string[]) {
      await expectRefused('POST', `/v1/wallets/${walletId}/pay`, raw, { raw: true });
      await expectRefused('POST', `/v1/wallets/${walletId}/transfer`, raw, { raw: true });
      await expectRefused('PUT', `/v1/wallets/${walletId}/policy`, raw, { raw: true });
      await expectRefused('POST', settlement, raw, { raw: true });
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('PUT …/policy/signed refuses hostile documents and changes nothing', async () => {
    const before = await snapshot();
    const route = `/v1/wallets/${walletId}/policy/signed`;
    const good = { policy: {}, version: 1, issued_at: 1, signature: `0x${'11'.repeat(65)}` };
    for (const value of [...hostile.any!, ...hostile.unix_seconds!]) {
      await expectRefused('PUT', route, { ...good, version: value });
      await expectRefused('PUT', route, { ...good, issued_at: value });
    }
    for (const value of [...hostile.any!, ...hostile.bytes32_hex!, ...hostile.free_text!])
      await expectRefused('PUT', route, { ...good, signature: value });
    for (const value of [...hostile.any!, ...hostile.usd_amount!, ...USD_ABOVE_BOUND])
      await expectRefused('PUT', route, { ...good, policy: { per_tx_cap_usd: value } });
    await expectRefused('PUT', route, { ...good, extra_field: 1 });
    for (const raw of hostile.raw_bodies as string[]) await expectRefused('PUT', route, raw, { raw: true });
    assert.deepEqual(await snapshot(), before);
  });

  it('an error never echoes control characters or lone surrogates from the request', async () => {
    for (const key of ['\u001b[31mred', 'a\u0085b', '\u202egnp', 'x\udfffy', 'k'.repeat(5000)]) {
      const res = await expectRefused('POST', '/v1/wallets', { [key]: 1 });
      const text = JSON.stringify(res.body);
      // Raw C1 and bidi controls survive JSON.stringify; C0 and lone surrogates come out as \\u escapes.
      assert.equal(
        /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\\u00[01][0-9a-f]|\\ud[89a-f][0-9a-f]{2}/i.test(text),
        false,
        text.slice(0, 200),
      );
      assert.ok(text.length < 2000, `${text.length} characters`);
    }
  });

  it('refuses hostile raw bodies on every creating route', async () => {
    const before = await snapshot();
    for (const raw of hostile.raw_bodies as string[]) {
      await expectRefused('POST', '/v1/wallets', raw, { raw: true });
      await expectRefused('POST', '/v1/treasury', raw, { raw: true, token: t.adminToken });
      await expectRefused('POST', `/v1/treasuries/${accountId}/pats`, raw, { raw: true });
      // An empty body is no body, which rotate and revoke take (they would then read the balance).
      if (raw.trim() === '') continue;
      await expectRefused('POST', `/v1/wallets/${walletId}/rotate`, raw, { raw: true });
      await expectRefused('POST', `/v1/wallets/${walletId}/revoke`, raw, { raw: true });
    }
    // abandon_balance is a boolean (true and false are valid values, not hostile ones); anything else, or any
    // other field, is refused before the wallet is touched.
    for (const value of (hostile.any as unknown[]).filter((v) => typeof v !== 'boolean')) {
      await expectRefused('POST', `/v1/wallets/${walletId}/rotate`, { abandon_balance: value });
      await expectRefused('POST', `/v1/wallets/${walletId}/revoke`, { abandon_balance: value });
    }
    await expectRefused('POST', `/v1/wallets/${walletId}/revoke`, { abandon_balance: true, force: true });
    assert.deepEqual(await snapshot(), before);
  });

  it('refuses hostile path identifiers on every wallet route', async () => {
    const before = await snapshot();
    for (const id of hostile.identifier as string[]) {
      const encoded = encodeURIComponent(id);
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/rotate'],
        ['POST', '/revoke'],
      ] as const) {
        await expectRefused(method, `/v1/wallets/${encoded}${suffix}`, undefined);
      }
      await expectRefused('POST', `/v1/treasuries/${encoded}/pats`, {});
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('refuses hostile bearers with 401', async () => {
    for (const bearer of hostile.bearer as string[]) {
      const res = await fetch(`${t.baseUrl}/v1/wallets`, {
        headers: { authorization: bearer.startsWith('Basic') ? bearer : `Bearer ${bearer}` },
      }).catch(() => null);
      if (res === null) continue; // fetch itself refuses header values with NUL
      assert.equal(res.status, 401, bearer.slice(0, 20));
      const body = (await res.json()) as { error_code: string };
      assert.ok(['unauthorized', 'invalid_token', 'master_key_removed'].includes(body.error_code));
    }
  });

  it('refuses oversize, mistyped, deeply nested and over-long-header requests', async () => {
    const before = await snapshot();
    const big = JSON.stringify({ label: 'x'.repeat(2 * 1024 * 1024) });
    const tooLarge = await expectRefused('POST', '/v1/wallets', big, { raw: true });
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.error_code, 'payload_too_large');

    const wrongType = await t.request('POST', '/v1/wallets', {
      token,
      rawBody: 'label=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(wrongType.status, 415);
    assert.equal(wrongType.body.error_code, 'unsupported_media_type');

    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const tooDeep = await expectRefused('POST', '/v1/wallets', `{"policy": ${deep}}`, { raw: true });
    assert.deepEqual([tooDeep.body.error_code, tooDeep.body.limit], ['body_too_complex', 'depth']);
    // Walked for NUL and lone surrogates without recursion: as deep as the bound allows, with one at the bottom.
    const deepNul = await expectRefused(
      'POST',
      '/v1/wallets',
      `{"policy": ${'['.repeat(30)}"\\u0000"${']'.repeat(30)}}`,
      { raw: true },
    );
    assert.equal(deepNul.body.error_code, 'invalid_request');

    const longHeader = await fetch(`${t.baseUrl}/v1/wallets`, {
      headers: { authorization: `Bearer ${token}`, 'x-filler': 'a'.repeat(17 * 1024) },
    });
    assert.equal(longHeader.status, 431);
    assert.deepEqual(await snapshot(), before);
  });
});
