/**
 * The authorization matrix: every bearer-protected route × every kind of bearer → the expected status.
 * No cell is skipped. Destructive routes get a fresh target per cell.
 */
import assert from 'node:assert/strict';
import { hashToken } from '../../../src/api/auth/token-codec.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { signInWithNewKey } from '../../support/sign-in.js';

type Bearer =
  | 'none'
  | 'garbage'
  | 'removed_master_key'
  | 'legacy_treasury_key'
  | 'expired_session'
  | 'revoked_pat'
  | 'service_pat'
  | 'agent_pat'
  | 'treasury_pat'
  | 'gate_pat'
  | 'treasury_gate_pat'
  | 'other_account_pat'
  | 'agent_session'
  | 'session';
/**
 * `session` comes from a SIWE sign-in; `agent_session` from exchanging `agent_pat` (it acts as that agent only).
 * `gate_pat` carries the gate scope only; `treasury_gate_pat` is a Treasury PAT that also carries it (docs/gate.md).
 */
const BEARERS: Bearer[] = [
  'none',
  'garbage',
  'removed_master_key',
  'legacy_treasury_key',
  'expired_session',
  'revoked_pat',
  'service_pat',
  'agent_pat',
  'treasury_pat',
  'gate_pat',
  'treasury_gate_pat',
  'other_account_pat',
  'agent_session',
  'session',
];
const UNAUTHENTICATED: Bearer[] = ['none', 'garbage', 'removed_master_key', 'expired_session', 'revoked_pat'];

const requirements = paymentRequirements();

describe('authorization matrix (every route × every bearer)', function () {
  this.timeout(240_000);
  let t: TestTreasury;
  const tokens = {} as Record<Bearer, string | undefined>;
  let session: string;
  let treasuryAccountId: string;
  let treasuryPat: string;
  let sellerId: string;
  /** An `mpp` seller of the account and one of its endpoints (the gate's ledger rows name it). */
  let gateEndpointId: string;

  async function signIn() {
    return signInWithNewKey(t);
  }

  before(async () => {
    // Every route × bearer cell makes its own wallets in the few accounts of the table: past the production
    // wallet bounds (tenant-bounds.test.ts tests those).
    t = await startTestTreasury({
      extraEnv: { TREASURY_MAX_WALLETS_PER_AGENT: '100000', TREASURY_MAX_WALLETS_PER_ACCOUNT: '1000000' },
    });
    const me = await signIn();
    session = me.session;
    const mk = async (body: unknown, token = session) => (await t.request('POST', '/v1/pats', { token, body })).body;
    const tp = await mk({ scope_type: 'treasury' });
    treasuryPat = tp.pat;
    treasuryAccountId = tp.scope_id;
    const other = await signIn();
    const revoked = await mk({ scope_type: 'agent' });
    await t.request('DELETE', `/v1/pats/${revoked.id}`, { token: session });
    const expired = await signIn();
    await t.db
      .knex('api_tokens')
      .where({ token_hash: hashToken(expired.session) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Matrix seller' } })).body;
    sellerId = seller.seller_id;
    const servicePat = seller.pat as string;
    const legacy = await t.db.knex('api_tokens').where({ scope_id: treasuryAccountId, kind: 'api_key' }).first();
    assert.equal(legacy, undefined, 'agent Treasury accounts have no legacy key');
    const minted = (
      await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'org', owner_id: 'matrix' } })
    ).body;
    const agentPat = (await mk({ scope_type: 'agent' })).pat as string;
    const mpp = (
      await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Gate seller', protocol: 'mpp' } })
    ).body;
    gateEndpointId = (
      await t.request('POST', `/v1/sellers/${mpp.seller_id}/endpoints`, {
        token: session,
        body: { path: '/gated', price: '0.01' },
      })
    ).body.endpoint_id;
    assert.ok(gateEndpointId, 'the mpp seller has an endpoint');
    const agentSession = (await t.request('POST', '/v1/identity/exchange-pat', { token: agentPat })).body
      .session as string;
    Object.assign(tokens, {
      none: undefined,
      garbage: 'not-a-token',
      removed_master_key: 'xx_live_sk_0123456789',
      legacy_treasury_key: minted.api_key,
      expired_session: expired.session,
      revoked_pat: revoked.pat,
      service_pat: servicePat,
      agent_pat: agentPat,
      agent_session: agentSession,
      treasury_pat: treasuryPat,
      gate_pat: (await mk({ scope_type: 'gate' })).pat,
      treasury_gate_pat: (await mk({ scope_type: 'treasury', gate: true })).pat,
      other_account_pat: (await mk({ scope_type: 'treasury' }, other.session)).pat,
      session,
    });
  });
  after(async () => {
    await t?.stop();
  });

  const wallet = async () =>
    (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: {} })).body.id as string;
  const freshPat = async () =>
    (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } })).body.id as string;

  /** `okAs`: what an authorized bearer gets when the route's own precondition answers (e.g. 409). */
  type Route = {
    name: string;
    call: (token: string | undefined) => Promise<number>;
    ok: Bearer[];
    notFound?: Bearer[];
    okAs?: string;
  };
  const walletOps: Bearer[] = ['treasury_pat', 'treasury_gate_pat', 'agent_pat', 'agent_session'];
  const walletAdmin: Bearer[] = ['treasury_pat', 'treasury_gate_pat'];
  /** The gate's routes: a PAT carrying the gate scope, alone or beside a Treasury scope. */
  const gate: Bearer[] = ['gate_pat', 'treasury_gate_pat'];
  /** Money control: a sign-in session only. */
  const owner: Bearer[] = ['session'];
  /**
   * Reading the account's sellers: the owner's sign-in session (or the seller's service PAT); never
   * `agent_session`, which holds no more than the agent PAT it was exchanged from (session-powers.ts).
   */
  const sellerSurface: Bearer[] = ['session', 'service_pat'];
  /** Managing a seller: the owner's sign-in session or the seller's service PAT (session-powers.ts). */
  const sellerManagement: Bearer[] = ['session', 'service_pat'];
  /** Every bearer the platform authenticates (not the legacy key: the platform's routes answer it 401). */
  const authenticated = BEARERS.filter((b) => !UNAUTHENTICATED.includes(b) && b !== 'legacy_treasury_key');
  /** A route on one wallet of the account: to a foreign Treasury bearer there is no such wallet (404). */
  const walletRoute = (name: string, call: Route['call'], ok: Bearer[]): Route => ({
    name,
    call,
    ok,
    notFound: ['legacy_treasury_key', 'other_account_pat'],
  });
  let counter = 0;
  const endpoint = async () =>
    (
      await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
        token: session,
        body: { path: `/e${counter++}`, price: '0.01' },
      })
    ).body.endpoint_id as string;
  const ledgerReport = () => ({
    tx_hash: `0x${(counter++).toString(16).padStart(64, '0')}`,
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    amount: '1000',
    network: 'eip155:84532',
  });
  const req =
    (method: string, path: string | (() => Promise<string>), body?: unknown) => async (token: string | undefined) => {
      const p = typeof path === 'string' ? path : await path();
      return (
        await t.request(method, p, {
          ...(token === undefined ? {} : { token }),
          ...(body === undefined ? {} : { body }),
        })
      ).status;
    };
  const onWallet = (method: string, suffix: string, body?: unknown, fresh = false) => {
    let shared: string | undefined;
    return req(
      method,
      async () => `/v1/wallets/${fresh ? await wallet() : (shared ??= await wallet())}${suffix}`,
      body,
    );
  };
  /** A route under the matrix's seller: `/v1/sellers/{id}` and then `suffix`. */
  const onSeller = (method: string, suffix: string, body?: unknown) =>
    req(method, () => Promise.resolve(`/v1/sellers/${sellerId}${suffix}`), body);

  const ROUTES: Route[] = [
    { name: 'POST /v1/treasury', call: req('POST', '/v1/treasury', { owner_type: 'org', owner_id: 'x' }), ok: [] },
    {
      name: 'POST /v1/treasuries/{id}/pats',
      call: req('POST', () => Promise.resolve(`/v1/treasuries/${treasuryAccountId}/pats`), {}),
      // The operator or the account's own legacy key only (an agent's Treasury account has none); never a PAT.
      ok: [],
      notFound: ['legacy_treasury_key'],
    },
    // Creating and listing act on the bearer's own Treasury account, so a foreign Treasury bearer succeeds there.
    {
      name: 'POST /v1/wallets',
      call: req('POST', '/v1/wallets', {}),
      ok: [...walletAdmin, 'legacy_treasury_key', 'other_account_pat'],
    },
    {
      name: 'GET /v1/wallets',
      call: req('GET', '/v1/wallets'),
      ok: [...walletOps, 'legacy_treasury_key', 'other_account_pat'],
    },
    walletRoute('GET /v1/wallets/{id}', onWallet('GET', ''), walletOps),
    walletRoute(
      'POST /v1/wallets/{id}/rotate',
      onWallet('POST', '/rotate', { abandon_balance: true }, true),
      walletAdmin,
    ),
    walletRoute(
      'POST /v1/wallets/{id}/revoke',
      onWallet('POST', '/revoke', { abandon_balance: true }, true),
      walletAdmin,
    ),
    walletRoute('GET /v1/wallets/{id}/policy', onWallet('GET', '/policy'), walletOps),
    walletRoute('PUT /v1/wallets/{id}/policy', onWallet('PUT', '/policy', {}), walletAdmin),
    walletRoute(
      'POST /v1/wallets/{id}/policy/evaluate',
      onWallet('POST', '/policy/evaluate', { to: requirements.payTo, amount_usd: '1' }),
      walletOps,
    ),
    walletRoute(
      'POST /v1/wallets/{id}/pay',
      onWallet('POST', '/pay', { payment_requirements: requirements }),
      walletOps,
    ),
    walletRoute(
      'POST /v1/wallets/{id}/transfer',
      onWallet('POST', '/transfer', { to: requirements.payTo, amount_usd: '0.001' }),
      walletOps,
    ),
    { name: 'POST /v1/identity/exchange-pat', call: req('POST', '/v1/identity/exchange-pat'), ok: ['agent_pat'] },
    { name: 'GET /v1/auth/whoami', call: req('GET', '/v1/auth/whoami'), ok: authenticated },
    { name: 'POST /v1/pats', call: req('POST', '/v1/pats', { scope_type: 'agent' }), ok: owner },
    { name: 'GET /v1/pats', call: req('GET', '/v1/pats'), ok: owner },
    { name: 'DELETE /v1/pats/{id}', call: req('DELETE', async () => `/v1/pats/${await freshPat()}`), ok: owner },
    {
      name: 'PATCH /v1/pats/{id}',
      call: req('PATCH', async () => `/v1/pats/${await freshPat()}`, { daily_cap_usd: '3' }),
      ok: owner,
    },
    { name: 'POST /v1/sellers', call: req('POST', '/v1/sellers', { name: 'another' }), ok: owner },
    { name: 'GET /v1/sellers', call: req('GET', '/v1/sellers'), ok: owner },
    {
      name: 'GET /v1/sellers/{id}',
      call: onSeller('GET', ''),
      ok: sellerSurface,
    },
    {
      name: 'POST /v1/sellers/{id}/suspend',
      call: onSeller('POST', '/suspend'),
      ok: sellerManagement,
    },
    {
      name: 'POST /v1/sellers/{id}/resume',
      call: onSeller('POST', '/resume'),
      ok: sellerManagement,
    },
    {
      name: 'POST /v1/sellers/{id}/endpoints',
      call: async (token) =>
        req('POST', `/v1/sellers/${sellerId}/endpoints`, { path: `/p${counter++}`, price: '0.01' })(token),
      ok: sellerManagement,
    },
    {
      name: 'GET /v1/sellers/{id}/endpoints',
      call: onSeller('GET', '/endpoints'),
      ok: sellerSurface,
    },
    {
      name: 'PATCH /v1/sellers/{id}/endpoints/{endpoint_id}',
      call: req('PATCH', async () => `/v1/sellers/${sellerId}/endpoints/${await endpoint()}`, { price: '0.02' }),
      ok: sellerManagement,
    },
    {
      name: 'DELETE /v1/sellers/{id}/endpoints/{endpoint_id}',
      call: req('DELETE', async () => `/v1/sellers/${sellerId}/endpoints/${await endpoint()}`),
      ok: sellerManagement,
    },
    {
      name: 'PATCH /v1/sellers/{id}',
      call: onSeller('PATCH', '', { name: 'Matrix seller' }),
      ok: sellerManagement,
    },
    {
      name: 'GET /v1/sellers/{id}/banking',
      call: onSeller('GET', '/banking'),
      ok: sellerSurface,
    },
    {
      name: 'PUT /v1/sellers/{id}/banking',
      call: onSeller('PUT', '/banking', {
        legal_entity: 'M Ltd',
        country: 'GB',
      }),
      ok: sellerManagement,
    },
    {
      name: 'POST /v1/sellers/{id}/banking/verify',
      call: onSeller('POST', '/banking/verify'),
      ok: [],
    },
    {
      name: 'GET /v1/sellers/{id}/verify',
      call: onSeller('GET', '/verify'),
      ok: sellerSurface,
    },
    {
      name: 'POST /v1/sellers/{id}/verify',
      call: onSeller('POST', '/verify'),
      ok: sellerManagement,
      okAs: '409',
    },
    {
      name: 'POST /v1/sellers/{id}/refresh',
      call: onSeller('POST', '/refresh'),
      ok: sellerManagement,
      okAs: '409',
    },
    {
      name: 'POST /v1/sellers/{id}/pats',
      call: onSeller('POST', '/pats', { label: 'ci' }),
      ok: owner,
    },
    {
      name: 'GET /v1/sellers/{id}/pats',
      call: onSeller('GET', '/pats'),
      ok: owner,
    },
    {
      name: 'DELETE /v1/sellers/{id}/pats/{pat_id}',
      call: req(
        'DELETE',
        async () =>
          `/v1/sellers/${sellerId}/pats/${(await t.request('POST', `/v1/sellers/${sellerId}/pats`, { token: session, body: {} })).body.id}`,
      ),
      ok: owner,
    },
    {
      name: 'GET /v1/sellers/{id}/pay-to',
      call: onSeller('GET', '/pay-to'),
      ok: sellerSurface,
    },
    // A well-formed body whose signature is not the address's: 422 pay_to_signature_invalid once authorized.
    {
      name: 'POST /v1/sellers/{id}/pay-to',
      call: onSeller('POST', '/pay-to', {
        address: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
        signature: `0x${'11'.repeat(65)}`,
      }),
      ok: owner,
      okAs: '422',
    },
    {
      name: 'GET /v1/sellers/{id}/payouts',
      call: onSeller('GET', '/payouts'),
      ok: sellerSurface,
    },
    {
      name: 'POST /v1/sellers/{id}/payouts/flush',
      call: onSeller('POST', '/payouts/flush'),
      ok: owner,
      okAs: '409',
    },
    { name: 'POST /v1/auth/verify', call: req('POST', '/v1/auth/verify'), ok: ['service_pat'] },
    {
      name: 'POST /v1/ledger',
      call: async (token) => req('POST', '/v1/ledger', ledgerReport())(token),
      ok: ['service_pat'],
    },
    { name: 'GET /v1/gate/catalogue', call: req('GET', '/v1/gate/catalogue'), ok: gate },
    {
      name: 'POST /v1/gate/ledger',
      call: async (token) => req('POST', '/v1/gate/ledger', { ...ledgerReport(), endpoint_id: gateEndpointId })(token),
      ok: gate,
    },
    {
      name: 'POST /v1/gate/ledger/batch',
      call: async (token) =>
        req('POST', '/v1/gate/ledger/batch', { rows: [{ ...ledgerReport(), endpoint_id: gateEndpointId }] })(token),
      ok: gate,
    },
    {
      name: 'GET /v1/ledger',
      call: req('GET', () => Promise.resolve(`/v1/ledger?seller_id=${sellerId}`)),
      ok: sellerSurface,
    },
    {
      name: 'GET /v1/ledger/revenue',
      call: req('GET', () => Promise.resolve(`/v1/ledger/revenue?seller_id=${sellerId}`)),
      ok: sellerSurface,
    },
    {
      name: 'GET /v1/ledger/export',
      call: req('GET', () => Promise.resolve(`/v1/ledger/export?format=csv&seller_id=${sellerId}`)),
      ok: sellerSurface,
    },
  ];

  function expected(route: Route, bearer: Bearer): string {
    if (UNAUTHENTICATED.includes(bearer)) return '401';
    const platformRoute = ['/v1/identity', '/v1/auth', '/v1/pats', '/v1/sellers', '/v1/ledger', '/v1/gate'].some(
      (prefix) => route.name.includes(prefix),
    );
    if (bearer === 'legacy_treasury_key' && platformRoute) return '401';
    if (route.ok.includes(bearer)) return route.okAs ?? '2xx';
    if (route.notFound?.includes(bearer)) return '404';
    return '403';
  }

  for (const route of ROUTES) {
    it(route.name, async () => {
      const got: Record<string, string> = {};
      const want: Record<string, string> = {};
      for (const bearer of BEARERS) {
        const status = await route.call(tokens[bearer]);
        got[bearer] = status >= 200 && status < 300 ? '2xx' : String(status);
        want[bearer] = expected(route, bearer);
      }
      assert.deepEqual(got, want);
    });
  }
});
