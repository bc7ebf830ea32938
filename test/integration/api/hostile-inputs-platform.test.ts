/**
 * The hostile-input table against the seller, endpoint and ledger route schemas, and against the query of
 * every paged platform list (agents, PATs, sellers, endpoints, payouts, service PATs): every value answers a
 * 4xx with a stable error code, and nothing is written.
 */
import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import {
  asQuery,
  FREE_TEXT,
  hostile,
  INHERITED_NAME_QUERIES,
  isEmptyObject,
  RAW_ABOVE_BOUND,
} from '../../support/hostile-refusals.js';

/** Amounts in range for a bigint column but above the largest any field takes (10^9 USD, 10^15 raw units). */
const USD_ABOVE_BOUND = ['1000000000.000001', '9223372036854.775807'];
/** Hostile route patterns: nested parameters, empty and over-long names, too many segments, regex syntax. */
const ROUTE_PATTERNS = hostile.route_pattern as string[];
/** The one hostile pattern the grammar takes: literal text, whose `(`, `+` and `$` are path characters. */
const PATTERN_GRAMMAR_TAKES = new Set(['/(a+)+$']);
/** A path (and a route-price key) is URL path characters, braces included, up to 512 characters. */
const PATH_TAKES = (p: string) => p.length <= 512 && !p.includes('[');

describe('hostile inputs against seller, endpoint and ledger routes', function () {
  this.timeout(300_000);
  let t: TestTreasury;
  let session: string;
  let seller: { seller_id: string; pat: string };
  let endpointId: string;

  before(async () => {
    t = await startTestTreasury();
    session = (await signInWithNewKey(t)).session;
    seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Target' } })).body;
    endpointId = (
      await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: session,
        body: { path: '/x', price: '0.01' },
      })
    ).body.endpoint_id;
  });
  after(async () => {
    await t?.stop();
  });

  async function snapshot() {
    const out: Record<string, unknown> = {};
    for (const table of ['sellers', 'endpoints', 'ledger_entries', 'api_tokens', 'payout_flushes', 'agents'])
      out[table] = await t.db.knex(table).orderBy('id');
    return JSON.stringify(out);
  }
  async function refused(method: string, route: string, body: unknown, token: string, raw = false) {
    const res = await t.request(method, route, { token, ...(raw ? { rawBody: body as string } : { body }) });
    const label = `${method} ${route} ${String(JSON.stringify(body)).slice(0, 400)}`;
    assert.ok(res.status >= 400 && res.status < 500, `${label} → ${res.status}`);
    assert.ok(
      typeof res.body?.error_code === 'string' && res.body.error_code in ERROR_CODES,
      `${label} → ${JSON.stringify(res.body).slice(0, 120)}`,
    );
  }

  it('every field of every seller-side body, raw bodies and path ids', async () => {
    const before = await snapshot();
    const s = seller.seller_id;
    const fields: Array<[string, string, Record<string, unknown>, string[]]> = [
      [
        'POST',
        '/v1/sellers',
        { name: 'ok' },
        ['name', 'slug', 'openapi_url', 'capabilities', 'protocol', 'payout_mode', 'legal_entity', 'country', 'origin'],
      ],
      ['PATCH', `/v1/sellers/${s}`, {}, ['name', 'origin', 'openapi_url', 'capabilities', 'payout_mode']],
      ['PUT', `/v1/sellers/${s}/banking`, { legal_entity: 'X Ltd', country: 'GB' }, ['legal_entity', 'country']],
      [
        'POST',
        `/v1/sellers/${s}/endpoints`,
        { path: '/y', price: '0.01' },
        ['slug', 'path', 'method', 'price', 'route_prices', 'path_pattern', 'capabilities'],
      ],
      [
        'PATCH',
        `/v1/sellers/${s}/endpoints/${endpointId}`,
        {},
        ['path', 'method', 'price', 'route_prices', 'path_pattern', 'capabilities'],
      ],
      [
        'POST',
        '/v1/ledger',
        {
          tx_hash: `0x${'1'.repeat(64)}`,
          payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          amount: '1000',
          network: 'eip155:84532',
        },
        ['tx_hash', 'payer', 'amount', 'network', 'endpoint_id', 'method', 'route', 'content_hash', 'nonce'],
      ],
    ];
    for (const [method, route, valid, names] of fields) {
      const token = route === '/v1/ledger' ? seller.pat : session;
      for (const field of names) {
        // Free text (names) takes any printable text; identifiers and enums also face the identifier table.
        const values =
          field === 'name' || field === 'legal_entity'
            ? [...hostile.any!, ...FREE_TEXT]
            : [...hostile.any!, ...hostile.identifier!];
        if (field === 'openapi_url' || field === 'origin')
          values.push(...FREE_TEXT.map((v) => `https://seller.example/${v}`));
        if (field === 'price') values.push(...hostile.usd_amount!.filter((v) => v !== '0'), ...USD_ABOVE_BOUND);
        // Route patterns are refused or matched in one pass (src/shared/path-pattern.ts); the ones a pattern's
        // grammar takes are held to that below. A path or a route-price key only refuses what no path spells.
        if (field === 'path_pattern') values.push(...ROUTE_PATTERNS.filter((v) => !PATTERN_GRAMMAR_TAKES.has(v)));
        if (field === 'path' || field === 'route_prices')
          for (const v of ROUTE_PATTERNS.filter((p) => !PATH_TAKES(p)))
            values.push(field === 'path' ? v : { [v]: '0.02' });
        if (field === 'route_prices')
          values.push(
            ...[...hostile.usd_amount!.filter((v) => v !== '0'), ...USD_ABOVE_BOUND].map((v) => ({ '/a': v })),
          );
        if (field === 'amount')
          values.push(...hostile.raw_token_amount!, ...hostile.raw_amount_over_bigint!, ...RAW_ABOVE_BOUND);
        if (field === 'payer')
          values.push(...hostile.evm_address!.filter((a) => a !== '0x0000000000000000000000000000000000000000'));
        if (field === 'tx_hash' || field === 'nonce') values.push(...hostile.bytes32_hex!);
        if (field === 'network') values.push(...hostile.caip2_network!);
        for (const value of values) {
          if (isEmptyObject(value) && field === 'route_prices') continue; // {} is a valid (empty) override map
          if (Array.isArray(value) && value.length === 0 && field === 'capabilities') continue; // no tags is valid
          if (value === null && field === 'path_pattern' && method === 'PATCH') continue; // null clears the pattern
          if (
            field === 'amount' &&
            typeof value === 'string' &&
            /^[1-9][0-9]{0,15}$/.test(value) &&
            BigInt(value) <= 10n ** 15n
          )
            continue; // a valid raw amount
          await refused(method, route, { ...valid, [field]: value }, token);
        }
      }
      for (const raw of hostile.raw_bodies as string[]) {
        if (raw === '' && method === 'PATCH') continue; // an empty PATCH body is "change nothing"
        await refused(method, route, raw, token, true);
      }
    }
    // Labels of agents, agent PATs and service PATs, and a PAT's daily cap.
    for (const value of [...hostile.any!, ...FREE_TEXT]) {
      if (value === null || (typeof value === 'object' && value !== null)) continue; // covered by the schema tests of these routes
      await refused('POST', '/v1/agents', { label: value }, session);
      await refused('POST', '/v1/pats', { scope_type: 'agent', label: value }, session);
      await refused('POST', `/v1/sellers/${s}/pats`, { label: value }, session);
    }
    // Every field optional: no body is the defaults, a JSON `null` is a body, and refused (it minted a PAT).
    for (const route of ['/v1/agents', '/v1/pats', `/v1/sellers/${s}/pats`])
      await refused('POST', route, 'null', session, true);
    for (const value of [...hostile.usd_amount!, ...USD_ABOVE_BOUND]) {
      await refused('POST', '/v1/pats', { scope_type: 'agent', daily_cap_usd: value }, session);
      await refused('PATCH', `/v1/pats/pat_${'0'.repeat(24)}`, { daily_cap_usd: value }, session);
    }
    await refused(
      'POST',
      '/v1/ledger',
      {
        tx_hash: `0x${'2'.repeat(64)}`,
        payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
        amount: '0',
        network: 'eip155:84532',
      },
      seller.pat,
    );
    for (const id of hostile.identifier as string[]) {
      await refused('GET', `/v1/sellers/${encodeURIComponent(id)}`, undefined, session);
      await refused('PATCH', `/v1/sellers/${s}/endpoints/${encodeURIComponent(id)}`, { price: '1' }, session);
      await refused('DELETE', `/v1/sellers/${s}/pats/${encodeURIComponent(id)}`, undefined, session);
    }
    for (const q of [
      'limit=0',
      'limit=9999',
      'from=yesterday',
      'cursor=!!!',
      'cursor=bm9wZQ',
      'format=xml',
      'seller_id=sel_1',
      'extra=1',
      ...INHERITED_NAME_QUERIES,
    ]) {
      await refused('GET', `/v1/ledger${q.startsWith('format') ? '/export' : ''}?${q}`, undefined, seller.pat);
    }
    for (const route of ['/v1/ledger/revenue', '/v1/ledger/export'])
      for (const q of INHERITED_NAME_QUERIES) await refused('GET', `${route}?${q}`, undefined, seller.pat);
    assert.equal(await snapshot(), before);
  });
  it('the query (limit, cursor, unknown keys) of every paged platform list', async () => {
    const before = await snapshot();
    const s = seller.seller_id;
    const lists: Array<[string, string]> = [
      ['/v1/agents', session],
      ['/v1/pats', session],
      ['/v1/sellers', session],
      [`/v1/sellers/${s}/endpoints`, seller.pat],
      [`/v1/sellers/${s}/payouts`, seller.pat],
      [`/v1/sellers/${s}/pats`, session],
    ];
    const values = [
      ...[...hostile.any!, ...hostile.identifier!, ...hostile.base64_header!, ...hostile.unix_seconds!].map(asQuery),
      '%FF',
      '%00',
    ];
    for (const [route, token] of lists) {
      for (const value of values) {
        await refused('GET', `${route}?limit=${value}`, undefined, token);
        await refused('GET', `${route}?cursor=${value}`, undefined, token);
      }
      for (const q of [
        'limit=1&limit=2',
        'cursor=a&cursor=b',
        'extra=1',
        '__proto__[x]=1',
        'constructor=1',
        'status=active',
        'format=csv',
        ...INHERITED_NAME_QUERIES,
      ])
        await refused('GET', `${route}?${q}`, undefined, token);
    }
    assert.equal(await snapshot(), before);
  });
});
