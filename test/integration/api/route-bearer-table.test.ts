/**
 * Who may call what: every route of the catalogue (src/api/api-catalog.ts) × every kind of bearer
 * (test/support/bearer-tenant.ts) → its outcome, through HTTP with real PostgreSQL and SoftHSM. This table is
 * the source of truth docs/security-model.md points at ("Who may call what").
 *
 * - A catalogued route without a row here fails, and so does a row naming no catalogued route.
 * - A row lists the bearers allowed; they get a 2xx (or, where the row says so, the route's own precondition
 *   answer, which proves the bearer got past every scope check). Every other bearer is refused: 401
 *   `master_key_removed` for the legacy api key on a platform route, 403 `fresh_sign_in_required` for an
 *   exchanged session where the owner's sign-in is allowed, 403 `insufficient_scope` otherwise.
 * - The allowed bearers must be the ones the route's catalogue auth kind names, unless the row says why the
 *   route admits fewer (`narrower`).
 * - A credential never outranks what made it (`PARENT_OF`): on every route where a bearer made from another
 *   bearer of the table is allowed, its parent is too — the exchanged session and the handoff PAT (made within
 *   `agent_pat`), the child Treasury PAT (made by `api_key`) — but for the routes each pair's exceptions name
 *   (the session's own logout; whoami, which the platform refuses the legacy key itself). The `within_session`
 *   agent PAT is made by the owner's account-scoped session, which holds every scope of its account: it is
 *   allowed nothing no credential of that account is.
 * - Cross-tenant: a route that names an object is called again by each of tenant A's bearers (the operator
 *   aside) naming tenant B's object; that must be refused (401, 403 or 404, and not the precondition answer an
 *   allowed bearer gets on its own object).
 */
import assert from 'node:assert/strict';
import type { Auth } from '../../../src/api/http/openapi/catalog-entry.js';
import { API_CATALOG } from '../../../src/api/api-catalog.js';
import { ERROR_CODES, type ErrorCode } from '../../../src/shared/error-codes.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { BEARERS, createTenant, UNREACHABLE_ORIGIN, type Bearer, type Tenant } from '../../support/bearer-tenant.js';
import { signInBody } from '../../support/sign-in.js';
import {
  agent,
  fixed,
  freshWallet,
  ledgerRead,
  ledgerRow,
  seller,
  treasuryOf,
  unique,
  wallet,
  type Recipe,
  type Target,
} from '../../support/route-call-recipes.js';

interface Row {
  allowed: readonly Bearer[];
  call: Recipe;
  /** What an allowed bearer gets when the route's own precondition answers (`<status> <error_code>`). */
  allowedAs?: string | Partial<Record<Bearer, string>>;
  /** The route acts on the bearer's own objects and names none: no cross-tenant cell. */
  ownOnly?: true;
  /** Each cell gets a tenant of its own: the route ends the bearer, its key or its account's sessions. */
  freshTenant?: true;
  /** Undoes, after the row, what its cells changed for the rows after it. */
  after?: (tenant: Tenant) => Promise<void>;
  /** Why the route admits fewer bearers than its catalogue auth kind. */
  narrower?: string;
  /** A batch answers 200 with an outcome per row: the outcome is its one row's (a refused row: its code). */
  perRow?: true;
}

/** A gate address: a loopback port nothing listens on (verification answers 502 `origin_unreachable`). */
const GATE_ADDRESS = { url: UNREACHABLE_ORIGIN, network: 'eip155:84532' };

/** The tenant's gate address set by its gate PAT. */
async function gateAddressSet(t: TestTreasury, tenant: Tenant): Promise<void> {
  const set = await t.request('POST', '/v1/gate/address', {
    token: await tenant.token('gate_pat'),
    body: GATE_ADDRESS,
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
}

/** The current UTC hour, as a gate's uptime bucket names it. */
const uptimeHour = () => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();

const TREASURY: Bearer[] = ['api_key', 'treasury_pat', 'gate_treasury_pat', 'child_treasury_pat'];
/** The agent PATs (the owner's, the one within its session, the handoff within the first). */
const AGENT_PATS: Bearer[] = ['agent_pat', 'session_agent_pat', 'handoff_pat'];
const AGENT: Bearer[] = [...AGENT_PATS, 'exchanged_session'];
const OWNER: Bearer[] = ['owner_session'];
const SESSIONS: Bearer[] = ['owner_session', 'exchanged_session'];
/** The seller's service PATs: the one it was created with, one minted for it. */
const SERVICE: Bearer[] = ['service_pat', 'minted_service_pat'];
/** Reading or managing a seller: the owner's sign-in session or the seller's service PAT (never an agent's). */
const SELLER: Bearer[] = ['owner_session', ...SERVICE];
/** The PATs carrying the gate scope: the gate-only one and the Treasury PAT minted with `gate: true`. */
const GATE: Bearer[] = ['gate_pat', 'gate_treasury_pat'];
const EVERYONE: Bearer[] = [...BEARERS];

/**
 * What made a bearer, where that is another bearer of the table, and the routes where the child may do what
 * its parent may not (with why): a credential never outranks what made it.
 */
const PARENT_OF: Partial<Record<Bearer, { parent: Bearer; except: Record<string, string> }>> = {
  exchanged_session: { parent: 'agent_pat', except: { 'POST /v1/auth/logout': 'it ends the session itself' } },
  handoff_pat: { parent: 'agent_pat', except: {} },
  child_treasury_pat: {
    parent: 'api_key',
    except: { 'GET /v1/auth/whoami': 'the platform refuses the legacy key itself (master_key_removed)' },
  },
};

/** The owner's account's credentials but the `within_session` agent PAT: the session and what it may make. */
const OF_ACCOUNT: Bearer[] = EVERYONE.filter(
  (b) => !['operator', 'api_key', 'child_treasury_pat', 'session_agent_pat'].includes(b),
);

/** The bearers each catalogue auth kind names (src/api/http/openapi/catalog-entry.ts). */
const BY_AUTH: Record<Auth, readonly Bearer[]> = {
  none: EVERYONE,
  operator: ['operator'],
  treasury: TREASURY,
  treasury_or_operator: ['operator', ...TREASURY],
  treasury_or_agent: [...TREASURY, ...AGENT],
  session: SESSIONS,
  owner_session: OWNER,
  owner_session_or_service: SELLER,
  session_or_agent: ['owner_session', ...AGENT],
  service: SERVICE,
  gate: GATE,
  agent: AGENT_PATS,
  // The platform refuses the legacy api key everywhere (401 master_key_removed).
  any: EVERYONE.filter((b) => b !== 'api_key'),
};

/** Routes served by the platform routers, which refuse the legacy api key (401 `master_key_removed`). */
const PLATFORM = [
  '/v1/identity/',
  '/v1/auth/',
  '/v1/pats',
  '/v1/agents',
  '/v1/sellers',
  '/v1/ledger',
  '/v1/gate/',
  '/v1/payment-ids/',
];

/** The table, keyed by `METHOD path` as the catalogue writes it. */
function table(t: TestTreasury): Record<string, Row> {
  const open = (path: string): Row => ({ allowed: EVERYONE, ownOnly: true, call: fixed(path) });
  return {
    'GET /livez': open('/livez'),
    'GET /health': open('/health'),
    'GET /readyz': open('/readyz'),
    'GET /metrics': open('/metrics'),
    'GET /v1/openapi.json': open('/v1/openapi.json'),
    'GET /docs': open('/docs'),
    'GET /docs/{asset}': open('/docs/init.js'),
    'GET /discovery/resources': open('/discovery/resources'),
    'GET /discovery/search': open('/discovery/search?query=weather'),
    // This API is no sandbox: everyone meets the route's own 404 (test/integration/cli/fund-from-api.test.ts has the 200).
    'GET /v1/sandbox/faucets': { ...open('/v1/sandbox/faucets'), allowedAs: '404 not_found' },
    'POST /v1/treasury': {
      allowed: ['operator'],
      ownOnly: true,
      call: fixed('/v1/treasury', () => ({ owner_type: 'org', owner_id: `table-${unique()}` })),
    },
    // A Treasury PAT may not mint Treasury PATs (treasury-routes.ts); treasury_pat and child_treasury_pat get 403.
    'POST /v1/treasuries/{id}/pats': {
      allowed: ['operator', 'api_key'],
      narrower: 'a Treasury PAT may not mint Treasury PATs',
      call: (x) => ({ path: `/v1/treasuries/${treasuryOf(x)}/pats`, body: { label: 'table' } }),
    },
    'POST /v1/treasuries/{id}/api-key/revoke': {
      allowed: ['operator', ...TREASURY],
      // The agent's Treasury account never had a legacy key.
      allowedAs: { treasury_pat: '404 api_key_not_found', gate_treasury_pat: '404 api_key_not_found' },
      freshTenant: true,
      call: (x) => ({ path: `/v1/treasuries/${treasuryOf(x)}/api-key/revoke` }),
    },
    // The operator's remedy: it ends every credential of the account, so each cell gets a tenant of its own.
    'POST /v1/treasuries/{id}/credentials/revoke': {
      allowed: ['operator'],
      freshTenant: true,
      call: (x) => ({ path: `/v1/treasuries/${treasuryOf(x)}/credentials/revoke` }),
    },
    'POST /v1/wallets': { allowed: TREASURY, ownOnly: true, call: fixed('/v1/wallets', () => ({})) },
    'GET /v1/wallets': { allowed: [...TREASURY, ...AGENT], ownOnly: true, call: fixed('/v1/wallets') },
    'GET /v1/wallets/{id}': { allowed: [...TREASURY, ...AGENT], call: wallet('') },
    // The harness has no chain: an allowed bearer gets as far as reading it.
    'GET /v1/wallets/{id}/balance': {
      allowed: [...TREASURY, ...AGENT],
      allowedAs: '503 chain_unavailable',
      call: wallet('/balance'),
    },
    'GET /v1/wallets/{id}/payments': { allowed: [...TREASURY, ...AGENT], call: wallet('/payments') },
    'POST /v1/wallets/{id}/rotate': { allowed: TREASURY, call: freshWallet('/rotate', { abandon_balance: true }) },
    'POST /v1/wallets/{id}/revoke': { allowed: TREASURY, call: freshWallet('/revoke', { abandon_balance: true }) },
    'GET /v1/wallets/{id}/policy': { allowed: [...TREASURY, ...AGENT], call: wallet('/policy') },
    'GET /v1/wallets/{id}/policy/receipt': {
      allowed: [...TREASURY, ...AGENT],
      call: wallet(`/policy/receipt?nonce=${'ab'.repeat(32)}`),
    },
    'GET /v1/wallets/{id}/decisions': { allowed: [...TREASURY, ...AGENT], call: wallet('/decisions') },
    'GET /v1/wallets/{id}/audit': { allowed: [...TREASURY, ...AGENT], call: wallet('/audit') },
    'PUT /v1/wallets/{id}/policy': { allowed: TREASURY, call: wallet('/policy', {}) },
    'PUT /v1/wallets/{id}/policy/signed': {
      allowed: TREASURY,
      // A document no authority signed: the signer refuses it, once the bearer reached the wallet.
      allowedAs: '403 policy_signature_invalid',
      call: wallet('/policy/signed', { policy: {}, version: 1, issued_at: 1, signature: `0x${'11'.repeat(65)}` }),
    },
    'POST /v1/wallets/{id}/policy/evaluate': {
      allowed: [...TREASURY, ...AGENT],
      call: wallet('/policy/evaluate', { to: SELLER_ADDRESS, amount_usd: '1' }),
    },
    'POST /v1/wallets/{id}/pay': {
      allowed: [...TREASURY, ...AGENT],
      call: wallet('/pay', { payment_requirements: paymentRequirements() }),
    },
    'POST /v1/wallets/{id}/transfer': {
      allowed: [...TREASURY, ...AGENT],
      call: wallet('/transfer', { to: SELLER_ADDRESS, amount_usd: '0.001' }),
    },
    'POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement': {
      allowed: [...TREASURY, ...AGENT],
      allowedAs: '404 authorization_not_found',
      call: wallet(`/authorizations/auth_${'0'.repeat(24)}/settlement`, { transaction: `0x${'ab'.repeat(32)}` }),
    },
    'POST /v1/identity/nonce': open('/v1/identity/nonce'),
    'POST /v1/identity/init': {
      allowed: EVERYONE,
      ownOnly: true,
      call: async () => ({ path: '/v1/identity/init', body: await signInBody(t) }),
    },
    'POST /v1/identity/exchange-pat': {
      allowed: AGENT_PATS,
      ownOnly: true,
      call: fixed('/v1/identity/exchange-pat'),
    },
    'GET /v1/auth/whoami': { allowed: BY_AUTH.any, ownOnly: true, call: fixed('/v1/auth/whoami') },
    'POST /v1/auth/logout': { allowed: SESSIONS, ownOnly: true, freshTenant: true, call: fixed('/v1/auth/logout') },
    'POST /v1/auth/sessions/revoke-all': {
      allowed: OWNER,
      ownOnly: true,
      freshTenant: true,
      call: fixed('/v1/auth/sessions/revoke-all'),
    },
    'POST /v1/auth/verify': { allowed: SERVICE, ownOnly: true, call: fixed('/v1/auth/verify') },
    'GET /v1/agents': { allowed: OWNER, ownOnly: true, call: fixed('/v1/agents') },
    'POST /v1/agents': { allowed: OWNER, ownOnly: true, call: fixed('/v1/agents', () => ({ label: 'table' })) },
    'GET /v1/agents/{id}': { allowed: ['owner_session', ...AGENT], call: agent('') },
    'GET /v1/agents/{id}/payments': { allowed: ['owner_session', ...AGENT], call: agent('/payments') },
    'POST /v1/agents/{id}/wallets': { allowed: ['owner_session', ...AGENT], call: agent('/wallets', {}) },
    'POST /v1/pats': {
      allowed: OWNER,
      call: (x) => ({ path: '/v1/pats', body: { scope_type: 'agent', scope_id: x.tenant.agentId } }),
    },
    'GET /v1/pats': { allowed: OWNER, ownOnly: true, call: fixed('/v1/pats') },
    'DELETE /v1/pats/{id}': { allowed: OWNER, call: async (x) => ({ path: `/v1/pats/${await x.tenant.freshPat()}` }) },
    'PATCH /v1/pats/{id}': {
      allowed: OWNER,
      call: (x) => ({ path: `/v1/pats/${x.tenant.targetPatId}`, body: { daily_cap_usd: '3' } }),
    },
    'POST /v1/sellers': {
      allowed: OWNER,
      ownOnly: true,
      call: fixed('/v1/sellers', () => ({ name: `T ${unique()}` })),
    },
    'GET /v1/sellers': { allowed: OWNER, ownOnly: true, call: fixed('/v1/sellers') },
    'GET /v1/sellers/{id}': { allowed: SELLER, call: seller('') },
    'PATCH /v1/sellers/{id}': { allowed: SELLER, call: seller('', () => ({ capabilities: ['table'] })) },
    'GET /v1/sellers/{id}/banking': { allowed: SELLER, call: seller('/banking') },
    'PUT /v1/sellers/{id}/banking': {
      allowed: SELLER,
      call: seller('/banking', () => ({ legal_entity: 'Table Ltd', country: 'GB' })),
    },
    'POST /v1/sellers/{id}/banking/verify': {
      allowed: ['operator'],
      call: async (x) => {
        const declared = await t.request('PUT', `/v1/sellers/${x.tenant.sellerId}/banking`, {
          token: await x.tenant.token('owner_session'),
          body: { legal_entity: 'Table Ltd', country: 'GB' },
        });
        assert.equal(declared.status, 200, JSON.stringify(declared.body));
        return { path: `/v1/sellers/${x.tenant.sellerId}/banking/verify` };
      },
    },
    'GET /v1/sellers/{id}/verify': { allowed: SELLER, call: seller('/verify') },
    'POST /v1/sellers/{id}/verify': {
      allowed: SELLER,
      allowedAs: '502 origin_unreachable',
      call: seller('/verify'),
    },
    'POST /v1/sellers/{id}/refresh': {
      allowed: SELLER,
      allowedAs: '409 openapi_url_not_configured',
      call: seller('/refresh'),
    },
    'GET /v1/sellers/{id}/payouts': { allowed: SELLER, call: seller('/payouts') },
    'GET /v1/sellers/{id}/pay-to': { allowed: SELLER, call: seller('/pay-to') },
    // A well-formed claim whose signature is not the address's.
    'POST /v1/sellers/{id}/pay-to': {
      allowed: OWNER,
      allowedAs: '422 pay_to_signature_invalid',
      call: seller('/pay-to', () => ({ address: SELLER_ADDRESS, signature: `0x${'11'.repeat(65)}` })),
    },
    'POST /v1/sellers/{id}/payouts/flush': {
      allowed: OWNER,
      allowedAs: '409 payouts_not_applicable',
      call: seller('/payouts/flush'),
    },
    'POST /v1/sellers/{id}/pats': { allowed: OWNER, call: seller('/pats', () => ({ label: 'table' })) },
    'GET /v1/sellers/{id}/pats': { allowed: OWNER, call: seller('/pats') },
    'DELETE /v1/sellers/{id}/pats/{pat_id}': {
      allowed: OWNER,
      call: async (x) => ({ path: `/v1/sellers/${x.tenant.sellerId}/pats/${await x.tenant.freshServicePat()}` }),
    },
    'POST /v1/sellers/{id}/suspend': {
      allowed: SELLER,
      call: seller('/suspend'),
      after: async (a) => {
        const resumed = await t.request('POST', `/v1/sellers/${a.sellerId}/resume`, {
          token: await a.token('owner_session'),
        });
        assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
      },
    },
    'POST /v1/sellers/{id}/resume': { allowed: SELLER, call: seller('/resume') },
    'POST /v1/sellers/{id}/endpoints': {
      allowed: SELLER,
      call: seller('/endpoints', () => ({ path: `/p${unique()}`, price: '0.01' })),
    },
    'GET /v1/sellers/{id}/endpoints': { allowed: SELLER, call: seller('/endpoints') },
    'GET /v1/sellers/{id}/discovery': { allowed: SELLER, call: seller('/discovery') },
    'PATCH /v1/sellers/{id}/endpoints/{endpoint_id}': {
      allowed: SELLER,
      call: async (x) => ({
        path: `/v1/sellers/${x.tenant.sellerId}/endpoints/${await x.tenant.freshEndpoint()}`,
        body: { price: '0.02' },
      }),
    },
    'DELETE /v1/sellers/{id}/endpoints/{endpoint_id}': {
      allowed: SELLER,
      call: async (x) => ({ path: `/v1/sellers/${x.tenant.sellerId}/endpoints/${await x.tenant.freshEndpoint()}` }),
    },
    'POST /v1/ledger': { allowed: SERVICE, ownOnly: true, call: fixed('/v1/ledger', ledgerRow) },
    'GET /v1/gate/catalogue': { allowed: GATE, ownOnly: true, call: fixed('/v1/gate/catalogue') },
    'GET /v1/gate/address': {
      allowed: GATE,
      ownOnly: true,
      call: async (x) => ({ path: (await gateAddressSet(t, x.tenant), '/v1/gate/address') }),
    },
    'POST /v1/gate/address': {
      allowed: GATE,
      ownOnly: true,
      call: fixed('/v1/gate/address', () => GATE_ADDRESS),
    },
    'POST /v1/gate/address/verify': {
      allowed: GATE,
      ownOnly: true,
      allowedAs: '502 origin_unreachable',
      call: async (x) => ({ path: (await gateAddressSet(t, x.tenant), '/v1/gate/address/verify') }),
    },
    'POST /v1/gate/ledger': {
      allowed: GATE,
      call: (x) => ({ path: '/v1/gate/ledger', body: { ...ledgerRow(), endpoint_id: x.tenant.endpointId } }),
    },
    'POST /v1/gate/ledger/batch': {
      allowed: GATE,
      perRow: true,
      call: (x) => ({
        path: '/v1/gate/ledger/batch',
        body: { rows: [{ ...ledgerRow(), endpoint_id: x.tenant.endpointId }] },
      }),
    },
    'POST /v1/gate/uptime': {
      allowed: GATE,
      perRow: true,
      call: (x) => ({
        path: '/v1/gate/uptime',
        body: { buckets: [{ endpoint_id: x.tenant.endpointId, hour: uptimeHour(), answered: 1, failed: 0 }] },
      }),
    },
    'POST /v1/ledger/batch': {
      allowed: SERVICE,
      perRow: true,
      ownOnly: true,
      call: fixed('/v1/ledger/batch', () => ({ rows: [ledgerRow()] })),
    },
    ...paymentIdRows(),
    'GET /v1/ledger': { allowed: SELLER, call: ledgerRead('/v1/ledger') },
    'GET /v1/ledger/revenue': { allowed: SELLER, call: ledgerRead('/v1/ledger/revenue') },
    'GET /v1/ledger/export': { allowed: SELLER, call: ledgerRead('/v1/ledger/export?format=csv') },
  };
}

/** The outcome the table promises a bearer on its own tenant's object. */
function expected(key: string, row: Row, bearer: Bearer): string {
  if (row.allowed.includes(bearer))
    return (typeof row.allowedAs === 'string' ? row.allowedAs : row.allowedAs?.[bearer]) ?? 'ok';
  const path = key.slice(key.indexOf(' ') + 1);
  if (bearer === 'api_key' && PLATFORM.some((p) => path.startsWith(p))) return '401 master_key_removed';
  if (bearer === 'exchanged_session' && row.allowed.includes('owner_session')) return '403 fresh_sign_in_required';
  return '403 insufficient_scope';
}

describe('route × bearer table: who may call what (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(600_000);
  let t: TestTreasury;
  let rows: Record<string, Row>;
  /** The bearers' tenant, and the tenant whose objects cross-tenant cells name. */
  let a: Tenant;
  let b: Tenant;

  before(async () => {
    // Every allowed cell of the wallet-creating rows adds a wallet to tenant A's agent: room for all of them.
    t = await startTestTreasury({ extraEnv: { TREASURY_MAX_WALLETS_PER_AGENT: '100' } });
    rows = table(t);
    a = await createTenant(t);
    b = await createTenant(t);
  });
  after(async () => {
    await t?.stop();
  });

  async function outcome(method: string, row: Row, target: Target, token: string): Promise<string> {
    const { path, body } = await row.call(target);
    const res = await t.request(method, path, { token, ...(body === undefined ? {} : { body }) });
    const rejected: string | undefined = row.perRow ? res.body?.results?.[0]?.error_code : undefined;
    if (rejected) return `${ERROR_CODES[rejected as ErrorCode]?.status ?? 'rejected'} ${rejected}`;
    if (res.status >= 200 && res.status < 300) return 'ok';
    return `${res.status} ${res.body?.error_code ?? '(no error_code)'}`;
  }

  it('classifies every catalogued route, as its catalogue auth kind says', () => {
    const keys = API_CATALOG.map((e) => `${e.method} ${e.path}`);
    assert.deepEqual(
      keys.filter((k) => !rows[k]),
      [],
      'catalogued routes without a row',
    );
    assert.deepEqual(
      Object.keys(rows).filter((k) => !keys.includes(k)),
      [],
      'rows of no catalogued route',
    );
    for (const entry of API_CATALOG) {
      const row = rows[`${entry.method} ${entry.path}`]!;
      const byAuth = [...BY_AUTH[entry.auth]].sort();
      const allowed = [...row.allowed].sort();
      if (row.narrower)
        assert.ok(
          allowed.every((x) => byAuth.includes(x)),
          `${entry.operationId}: ${row.narrower}`,
        );
      else assert.deepEqual(allowed, byAuth, `${entry.method} ${entry.path} is "${entry.auth}" in the catalogue`);
    }
  });

  it("allows no bearer anything its parent is refused, each pair's exceptions aside", () => {
    for (const [child, { parent, except }] of Object.entries(PARENT_OF)) {
      const outranking = Object.entries(rows)
        .filter(([, row]) => row.allowed.includes(child as Bearer) && !row.allowed.includes(parent))
        .map(([key]) => key);
      assert.deepEqual(outranking, Object.keys(except), `${child} (made by ${parent}) outranks it on`);
    }
  });

  it("allows the within_session agent PAT nothing its account's other credentials are refused", () => {
    const outranking = Object.entries(rows)
      .filter(
        ([, row]) => row.allowed.includes('session_agent_pat') && !row.allowed.some((b) => OF_ACCOUNT.includes(b)),
      )
      .map(([key]) => key);
    assert.deepEqual(outranking, []);
  });

  for (const entry of API_CATALOG) {
    const key = `${entry.method} ${entry.path}`;
    it(key, async () => {
      const row = rows[key];
      assert.ok(row, `${key} has no row`);
      const want: Record<string, string> = {};
      const got: Record<string, string> = {};
      for (const bearer of BEARERS) {
        const own = row.freshTenant ? await createTenant(t) : a;
        want[bearer] = expected(key, row, bearer);
        got[bearer] = await outcome(entry.method, row, { tenant: own, bearer }, await own.token(bearer));
        if (row.ownOnly || bearer === 'operator') continue;
        const foreign = await outcome(entry.method, row, { tenant: b, bearer }, await own.token(bearer));
        const refused = /^40[134] /.test(foreign) && !(row.allowed.includes(bearer) && foreign === want[bearer]);
        want[`${bearer} → B`] = 'refused';
        got[`${bearer} → B`] = refused ? 'refused' : foreign;
      }
      await row.after?.(a);
      assert.deepEqual(got, want);
    });
  }

  it('a handoff PAT is good once: its second use is 401 invalid_token, whatever the route', async () => {
    const handoff = await a.token('handoff_pat');
    assert.equal((await t.request('GET', '/v1/wallets', { token: handoff })).status, 200);
    for (const path of ['/v1/wallets', '/v1/auth/whoami']) {
      const again = await t.request('GET', path, { token: handoff });
      assert.equal(`${again.status} ${again.body?.error_code}`, '401 invalid_token', path);
    }
  });
});

/** The payment-identifier store's routes: the middleware's (service PAT, own seller) and the gate's (by endpoint). */
function paymentIdRows(): Record<string, Row> {
  const claim = () => ({ route: '/r', id: `pay_${unique()}`.padEnd(16, '0'), fingerprint: 'ab'.repeat(32) });
  const bodies = {
    begin: () => ({ ...claim(), pending_ttl_seconds: 60 }),
    complete: () => ({ ...claim(), answer: { status: 200, headers: {}, body_base64: '' } }),
    release: claim,
  };
  const rows: Record<string, Row> = {};
  for (const [step, body] of Object.entries(bodies)) {
    rows[`POST /v1/payment-ids/${step}`] = {
      allowed: SERVICE,
      ownOnly: true,
      call: fixed(`/v1/payment-ids/${step}`, body),
    };
    rows[`POST /v1/gate/payment-ids/${step}`] = {
      allowed: GATE,
      call: (x) => ({ path: `/v1/gate/payment-ids/${step}`, body: { ...body(), endpoint_id: x.tenant.endpointId } }),
    };
  }
  return rows;
}
