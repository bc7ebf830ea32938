/**
 * The hostile-input table (test/vectors/hostile-inputs.json) thrown at every catalogued route
 * (src/api/api-catalog.ts), field by field, through HTTP with real PostgreSQL and SoftHSM: the calls are made by
 * walking each route's catalogue schemas (test/support/hostile-catalogue-plan.ts), so a route, body field, query
 * key or path parameter added to the catalogue is attacked without this file naming it. Each call answers a 4xx
 * with a stable error code (src/shared/error-codes.ts) and a user message — never a 5xx, never a 2xx — and
 * after each route the server still answers; at the end no row of any table has changed, and every body field,
 * query key and path parameter of the catalogue was refused at least once for its own value.
 *
 * The table is sampled per field (half of `any`, one value of each other list, rotating from field to field),
 * deterministically, so the run stays short and every list meets every route. The other hostile-input suites
 * keep their hand-picked cases (headers, oversize and deep bodies, well-formed values a rule refuses).
 */
import assert from 'node:assert/strict';
import { API_CATALOG } from '../../../src/api/api-catalog.js';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { createTenant, type Bearer } from '../../support/bearer-tenant.js';
import {
  baseBodies,
  baseQuery,
  BEARER_BY_AUTH,
  pathValue,
  type BaseObjects,
} from '../../support/hostile-catalogue-bases.js';
import { planRoute, targetOf, VECTOR_CLASSES, type HostileCall } from '../../support/hostile-catalogue-plan.js';
import { snapshotOf } from '../../support/hostile-refusals.js';

/** Values per field: half the `any` list (the next field gets the other half) and one of each other list. */
const SAMPLE = { any: 8, perClass: 1 };
/** Calls in flight at once. */
const WIDTH = 8;
/** The HTTP server's bound on a request line and headers: a longer URL is refused before the app reads it. */
const HEADER_BOUND = 16 * 1024;

const show = (v: unknown) => String(JSON.stringify(v)).slice(0, 60);
const keyOf = (e: { method: string; path: string }) => `${e.method} ${e.path}`;
const paramsOf = (path: string) => [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);

describe('hostile inputs against every catalogued route, field by field (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  const snapshot = snapshotOf(t);
  let objects: BaseObjects;
  const tokens: Partial<Record<Bearer, string>> = {};
  let rowsBefore: Awaited<ReturnType<typeof snapshot>>;
  const targets = new Set<string>();
  const reached = new Set<string>();
  let sent = 0;
  let seed = 0;

  before(async () => {
    const tenant = await createTenant(t);
    objects = { tenant, servicePatId: await tenant.freshServicePat() };
    for (const bearer of new Set(Object.values(BEARER_BY_AUTH)))
      if (bearer) tokens[bearer] = await tenant.token(bearer);
    rowsBefore = await snapshot();
  });

  const basesOf = (entry: (typeof API_CATALOG)[number]) => ({
    bodies: baseBodies(entry, objects),
    query: baseQuery(entry, objects),
    params: Object.fromEntries(paramsOf(entry.path).map((p) => [p, pathValue(entry.path, p, objects) ?? ''])),
  });

  it('has a base body and query each route schema accepts, and an object for every path parameter', () => {
    const problems: string[] = [];
    for (const entry of API_CATALOG) {
      const bases = basesOf(entry);
      for (const [param, value] of Object.entries(bases.params))
        if (!value) problems.push(`${keyOf(entry)}: no value for {${param}} (test/support/hostile-catalogue-bases.ts)`);
      if (entry.body)
        for (const body of bases.bodies) {
          const parsed = entry.body.safeParse(body);
          if (!parsed.success) problems.push(`${keyOf(entry)}: base body refused: ${parsed.error.message}`);
        }
      if (entry.query) {
        const parsed = entry.query.safeParse(bases.query);
        if (!parsed.success) problems.push(`${keyOf(entry)}: base query refused: ${parsed.error.message}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  /** What is wrong with the answer to a call (nothing: a stable refusal), and whether it reached its field. */
  async function send(entry: (typeof API_CATALOG)[number], call: HostileCall): Promise<string | 'ok' | 'transport'> {
    const bearer = BEARER_BY_AUTH[entry.auth];
    const res = await t.request(entry.method, call.url, {
      ...(bearer ? { token: tokens[bearer]! } : {}),
      ...(call.raw !== undefined ? { rawBody: call.raw } : call.body !== undefined ? { body: call.body } : {}),
    });
    if (res.status === 431 && call.url.length > HEADER_BOUND) return 'transport';
    const code = res.body?.error_code;
    if (res.status >= 400 && res.status < 500 && typeof code === 'string' && code in ERROR_CODES)
      return typeof res.body.user_message === 'string' ? 'ok' : `${res.status} ${code} without a user message`;
    return `${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
  }

  // A route with no body, query or path parameter has nothing to attack.
  for (const entry of API_CATALOG.filter((e) => e.body || e.query || e.path.includes('{'))) {
    it(keyOf(entry), async () => {
      const { calls, targets: own } = planRoute(API_CATALOG, entry, basesOf(entry), { seed, size: SAMPLE });
      seed += own.length;
      for (const target of own) targets.add(target);
      const failures: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: WIDTH }, async () => {
          while (next < calls.length) {
            const call = calls[next++]!;
            const outcome = await send(entry, call);
            sent++;
            if (outcome === 'ok') {
              if (call.counts) reached.add(targetOf(entry, call.where, call.field));
            } else if (outcome !== 'transport')
              failures.push(`${call.where} ${call.field} [${call.vectorClass}] ${show(call.value)} → ${outcome}`);
          }
        }),
      );
      assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${calls.length} calls`);
      // The server still answers, and still knows the caller.
      assert.equal((await t.request('GET', '/livez')).status, 200);
      const whoami = await t.request('GET', '/v1/auth/whoami', { token: tokens.owner_session! });
      assert.equal(whoami.status, 200, JSON.stringify(whoami.body));
    });
  }

  it('refused a value of its own at every body field, query key and path parameter of the catalogue', () => {
    assert.ok(sent > 1000, `${sent} calls`);
    assert.deepEqual(
      [...targets].filter((target) => !reached.has(target)),
      [],
      'never refused for their own value: make the base hold the field (test/support/hostile-catalogue-bases.ts)',
    );
    assert.ok(Object.keys(VECTOR_CLASSES).length >= 10);
  });

  it('changed no row of any table', async () => {
    assert.deepEqual(await snapshot(), rowsBefore);
  });
});
