/**
 * TreasuryClient against a scripted Treasury over real HTTP: no token is `treasury_key_missing` before any
 * I/O; requests carry the bearer, the Idempotency-Key and the API's snake_case bodies; bad arguments are
 * refused naming the field; a 503 or a connection closed before the answer is retried (reads; pay only under
 * an Idempotency-Key); every non-2xx becomes a TreasuryApiError with code (error_code, reason or
 * error), user message, recovery and decision id; a 401 is returned, never retried; replies of the wrong
 * shape are never used; recovery kinds map to typed errors and unknown kinds are re-raised unchanged.
 */
import assert from 'node:assert/strict';
import {
  InvalidArgumentError,
  InvalidTreasuryReplyError,
  mapRecoveryError,
  PatCapReachedError,
  ReauthenticateError,
  TreasuryApiError,
  TreasuryClient,
  TreasuryKeyMissingError,
  TreasuryUnreachableError,
} from '../../../src/sdk/index.js';
import { treasuryPayer } from '../../../src/sdk/buyer-payer.js';
import { requirements, SELLER } from '../x402/x402-fixtures.js';
import {
  fakeTreasuryHandler,
  scriptedServer,
  signedFor,
  WALLET,
  WALLET_ID,
  type ScriptedReply,
  type ScriptedServer,
} from './scripted-http.js';

const CAP_BODY = {
  error_code: 'MGMT_6014',
  user_message: 'This PAT reached its daily cap of 5 USD. Raise it in the dashboard.',
  request_id: 'req_1',
  recovery: {
    kind: 'raise_pat_cap',
    settings_url: 'https://dash.example/settings/pats/pat_1',
    current_cap_usd: '5',
    attempted_amount_usd: '0.01',
  },
  spent_today_usd: '4.995',
};

describe('buyer SDK: TreasuryClient', () => {
  let treasury: ScriptedServer;
  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
  });
  afterEach(async () => treasury.close());
  const client = () => new TreasuryClient({ apiUrl: `${treasury.url}/`, token: 'xx_pat_test' });

  it('no token: TreasuryKeyMissingError (treasury_key_missing) at construction, nothing sent', () => {
    for (const token of [undefined, '', null]) {
      assert.throws(
        () => new TreasuryClient({ apiUrl: treasury.url, token: token as string | undefined }),
        (err: unknown) =>
          err instanceof TreasuryKeyMissingError &&
          err.code === 'treasury_key_missing' &&
          err.name === 'TreasuryKeyMissingError',
      );
    }
    assert.throws(() => new (TreasuryClient as unknown as new () => TreasuryClient)(), TreasuryKeyMissingError);
    assert.equal(treasury.requests.length, 0);
  });

  it('malformed options are refused naming the field; the token never appears in the message', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ apiUrl: 'ftp://x', token: 'xx_pat_secret1' }, 'options.apiUrl'],
      [{ apiUrl: 'http://user:pw@127.0.0.1', token: 'xx_pat_secret1' }, 'options.apiUrl'],
      [{ apiUrl: 'http://127.0.0.1', token: 'xx_pat secret1' }, 'options.token'],
      [{ apiUrl: 'http://127.0.0.1', token: 'xx_pat_secret1\r\nx: y' }, 'options.token'],
      [{ apiUrl: 'http://127.0.0.1', token: 'xx_pat_secret1', timeoutMs: 0 }, 'options.timeoutMs'],
      [{ apiUrl: 'http://127.0.0.1', token: 'xx_pat_secret1', fetch: 'no' }, 'options.fetch'],
    ];
    for (const [options, field] of cases) {
      assert.throws(
        () => new TreasuryClient(options as never),
        (err: unknown) =>
          err instanceof InvalidArgumentError && err.field === field && !err.message.includes('secret1'),
        field,
      );
    }
  });

  it('reads wallets, a wallet and its balance with the bearer; replies are schema-checked', async () => {
    treasury.handler = fakeTreasuryHandler((req) => {
      // A server that answers in one page, without next_cursor.
      if (req.url === '/v1/wallets?limit=500') return { status: 200, body: { wallets: [WALLET] } };
      if (req.url.endsWith('/balance'))
        return {
          status: 200,
          body: {
            wallet_id: WALLET_ID,
            network: 'eip155:84532',
            asset: requirements().asset,
            address: WALLET.address,
            balance_raw: '1500000',
            balance_usd: '1.5',
            stale: false,
            updated_at: 'now',
          },
        };
      return undefined;
    });
    const c = client();
    assert.deepEqual(await c.listWallets(), [WALLET]);
    assert.equal((await c.getWallet(WALLET_ID)).address, WALLET.address);
    assert.equal((await c.getBalance(WALLET_ID)).balance_raw, '1500000');
    assert.deepEqual(
      treasury.requests.map((r) => [r.method, r.url, r.headers.authorization]),
      [
        ['GET', '/v1/wallets?limit=500', 'Bearer xx_pat_test'],
        ['GET', `/v1/wallets/${WALLET_ID}`, 'Bearer xx_pat_test'],
        ['GET', `/v1/wallets/${WALLET_ID}/balance`, 'Bearer xx_pat_test'],
      ],
    );
  });

  it('listWallets reads every page the cursor leads to, and refuses a cursor that repeats', async () => {
    const second = { ...WALLET, id: `wal_${'b'.repeat(24)}`, label: 'second' };
    treasury.handler = fakeTreasuryHandler((req) => {
      if (req.url === '/v1/wallets?limit=500')
        return { status: 200, body: { wallets: [WALLET], next_cursor: 'page-2' } };
      if (req.url === '/v1/wallets?limit=500&cursor=page-2')
        return { status: 200, body: { wallets: [second], next_cursor: null } };
      return undefined;
    });
    assert.deepEqual(await client().listWallets(), [WALLET, second]);
    assert.deepEqual(
      treasury.requests.map((r) => r.url),
      ['/v1/wallets?limit=500', '/v1/wallets?limit=500&cursor=page-2'],
    );

    treasury.handler = fakeTreasuryHandler((req) =>
      req.url.startsWith('/v1/wallets?')
        ? { status: 200, body: { wallets: [WALLET], next_cursor: 'again' } }
        : undefined,
    );
    await assert.rejects(
      client().listWallets(),
      (err: unknown) => err instanceof InvalidTreasuryReplyError && err.code === 'invalid_treasury_reply',
    );
  });

  it('pay and transfer send the API body (snake_case) and the Idempotency-Key', async () => {
    treasury.handler = fakeTreasuryHandler((req) =>
      req.url.endsWith('/transfer')
        ? {
            status: 200,
            body: signedFor({ payTo: SELLER, amount: '250000', asset: requirements().asset, network: 'eip155:84532' }),
          }
        : undefined,
    );
    const c = client();
    const r = requirements();
    const paid = await c.pay(WALLET_ID, {
      paymentRequirements: r,
      capability: 'search.web',
      authorization: { nonce: `0x${'cd'.repeat(32)}`, valid_before: '1900000000' },
      idempotencyKey: 'order-42',
    });
    assert.equal(paid.decision_id, 'pd_1');
    await c.transfer(WALLET_ID, { to: SELLER, amountUsd: '0.25', validForSeconds: 600, idempotencyKey: 'tr-1' });
    const [pay, transfer] = treasury.requests;
    assert.deepEqual(JSON.parse(pay!.body), {
      payment_requirements: r,
      capability: 'search.web',
      authorization: { nonce: `0x${'cd'.repeat(32)}`, valid_before: '1900000000' },
    });
    assert.equal(pay!.headers['idempotency-key'], 'order-42');
    assert.equal(pay!.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(transfer!.body), { to: SELLER, amount_usd: '0.25', valid_for_seconds: 600 });
    assert.equal(transfer!.headers['idempotency-key'], 'tr-1');
  });

  it('bad arguments are refused before any I/O, naming the field', async () => {
    const c = client();
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => c.getWallet('../admin'), 'walletId'],
      [() => c.getBalance('wal_1/../../x'), 'walletId'],
      [
        () => c.pay(WALLET_ID, { paymentRequirements: { ...requirements(), amount: '1.5' } }),
        'input.paymentRequirements.amount',
      ],
      [
        () => c.pay(WALLET_ID, { paymentRequirements: requirements(), idempotencyKey: 'has space' }),
        'input.idempotencyKey',
      ],
      [
        () => c.pay(WALLET_ID, { paymentRequirements: requirements(), authorization: { nonce: '0x12' } }),
        'input.authorization.nonce',
      ],
      [() => c.pay(WALLET_ID, { paymentRequirements: requirements(), capability: 'Search Web' }), 'input.capability'],
      [() => c.transfer(WALLET_ID, { to: SELLER, amountUsd: '0.1e1' }), 'input.amountUsd'],
      [() => c.transfer(WALLET_ID, { to: SELLER, amountUsd: 1 as unknown as string }), 'input.amountUsd'],
      [() => c.transfer(WALLET_ID, { to: 'bob', amountUsd: '1' }), 'input.to'],
    ];
    for (const [call, field] of cases)
      await assert.rejects(
        call(),
        (err: unknown) => err instanceof InvalidArgumentError && err.field === field && err.code === 'invalid_argument',
        field,
      );
    assert.equal(treasury.requests.length, 0);
  });

  it('non-2xx → TreasuryApiError: code from error_code, else reason, else error; recovery, decision_id and the raw body kept', async () => {
    const cases: Array<
      [number, unknown, Partial<Record<'code' | 'userMessage' | 'decisionId' | 'recoveryKind', string>>]
    > = [
      [
        403,
        {
          error_code: 'policy_denied',
          reason: 'policy_denied',
          decision_id: 'pd_9',
          rule: 'daily_cap_usd',
          user_message: 'Over the daily cap.',
        },
        { code: 'policy_denied', decisionId: 'pd_9', userMessage: 'Over the daily cap.' },
      ],
      [
        403,
        { reason: 'policy_denied', decision_id: 'pd_8' },
        { code: 'policy_denied', decisionId: 'pd_8', userMessage: 'Treasury answered HTTP 403.' },
      ],
      [400, { error: 'bad_request' }, { code: 'bad_request' }],
      [429, CAP_BODY, { code: 'MGMT_6014', recoveryKind: 'raise_pat_cap', userMessage: CAP_BODY.user_message }],
      [
        410,
        { error_code: 'wallet_revoked', user_message: 'Revoked.', recovery: { no_kind: true } },
        { code: 'wallet_revoked' },
      ],
      [502, '<html>bad gateway</html>', { code: 'http_502', userMessage: 'Treasury answered HTTP 502.' }],
      [500, '', { code: 'http_500' }],
    ];
    for (const [status, body, expected] of cases) {
      treasury.handler = () => ({ status, body });
      await assert.rejects(client().getWallet(WALLET_ID), (err: unknown) => {
        assert.ok(err instanceof TreasuryApiError);
        assert.equal(err.status, status);
        assert.equal(err.code, expected.code);
        if (expected.userMessage) assert.equal(err.userMessage, expected.userMessage);
        assert.equal(err.decisionId, expected.decisionId);
        assert.equal(err.recovery?.kind, expected.recoveryKind);
        assert.deepEqual(err.body, body === '' ? undefined : body);
        return true;
      });
    }
  });

  // What may pass in a moment: retried for reads, and for pay only under an Idempotency-Key (the retry is the same payment).
  const transientFailures: Array<{ what: string; reply: ScriptedReply; failed: (err: unknown) => boolean }> = [
    {
      what: 'a 503 (retried after its Retry-After)',
      reply: {
        status: 503,
        headers: { 'retry-after': '0' },
        body: {
          error_code: 'database_unavailable',
          user_message: 'The database is unreachable or restarting; retry shortly.',
          request_id: 'req_1',
        },
      },
      failed: (err) => err instanceof TreasuryApiError && err.status === 503 && err.code === 'database_unavailable',
    },
    {
      what: 'a connection closed before the answer (the request may have been served)',
      reply: { status: 200, drop: true },
      failed: (err) => err instanceof TreasuryUnreachableError && err.code === 'treasury_unreachable',
    },
  ];
  for (const { what, reply, failed } of transientFailures) {
    it(`${what}: retried for reads always, for pay only with an idempotencyKey (the same key each time), never past unavailableRetries`, async () => {
      let failures = 0;
      treasury.handler = fakeTreasuryHandler(() => (failures-- > 0 ? reply : undefined));

      failures = 2;
      assert.equal((await client().getWallet(WALLET_ID)).address, WALLET.address);
      assert.equal(treasury.requests.length, 3, 'two failures, then the answer');

      treasury.requests.length = 0;
      failures = 1;
      const paid = await client().pay(WALLET_ID, { paymentRequirements: requirements(), idempotencyKey: 'pay-7' });
      assert.ok(paid.signature);
      assert.deepEqual(
        treasury.requests.map((r) => r.headers['idempotency-key']),
        ['pay-7', 'pay-7'],
        'the retry is the same payment',
      );

      treasury.requests.length = 0;
      failures = 1;
      await assert.rejects(client().pay(WALLET_ID, { paymentRequirements: requirements() }), failed);
      assert.equal(treasury.requests.length, 1, 'a pay without an idempotencyKey is not sent twice');

      treasury.requests.length = 0;
      failures = 10;
      await assert.rejects(client().getWallet(WALLET_ID), failed);
      assert.equal(treasury.requests.length, 3, 'the first try and two retries');

      treasury.requests.length = 0;
      failures = 10;
      const noRetry = new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test', unavailableRetries: 0 });
      await assert.rejects(noRetry.getWallet(WALLET_ID), failed);
      assert.equal(treasury.requests.length, 1);
    });
  }

  it("a balance read to explain a refused payment is asked once: the buyer is not held behind the client's 503 retries", async () => {
    const unavailable: ScriptedReply = {
      status: 503,
      headers: { 'retry-after': '0' },
      body: { error_code: 'chain_unavailable', user_message: 'The chain RPC is unreachable.', request_id: 'req_1' },
    };
    treasury.handler = fakeTreasuryHandler((req) => (req.url.endsWith('/balance') ? unavailable : undefined));

    const payer = treasuryPayer(client(), WALLET_ID, undefined);
    assert.ok(payer.balance);
    await assert.rejects(payer.balance(requirements()), (err) => err instanceof TreasuryApiError && err.status === 503);
    assert.equal(treasury.requests.length, 1, 'one read, no retry');

    treasury.requests.length = 0;
    await assert.rejects(client().getBalance(WALLET_ID), (err) => err instanceof TreasuryApiError);
    assert.equal(treasury.requests.length, 3, "a caller's own balance read keeps the client's retries");

    for (const asked of [-1, 1.5, Number.NaN, 99]) {
      treasury.requests.length = 0;
      await assert.rejects(client().getBalance(WALLET_ID, { unavailableRetries: asked }));
      assert.equal(treasury.requests.length, 3, `unavailableRetries ${asked}: never more than the client's own`);
    }
  });

  it('a 401 is returned to the caller: no refresh, no retry', async () => {
    treasury.handler = () => ({
      status: 401,
      body: {
        error_code: 'invalid_token',
        user_message: 'Unknown, expired or revoked token.',
        recovery: { kind: 'reauthenticate', cli_command: 'xx init', login_command: 'xx login --token <PAT>' },
      },
    });
    await assert.rejects(
      client().pay(WALLET_ID, { paymentRequirements: requirements() }),
      (err: unknown) => err instanceof TreasuryApiError && err.status === 401 && err.code === 'invalid_token',
    );
    assert.equal(treasury.requests.length, 1);
  });

  it('a redirect is not followed (the bearer stays with Treasury)', async () => {
    const elsewhere = await scriptedServer(() => ({ status: 200, body: WALLET }));
    try {
      treasury.handler = () => ({ status: 307, headers: { location: `${elsewhere.url}/v1/wallets/${WALLET_ID}` } });
      await assert.rejects(
        client().getWallet(WALLET_ID),
        (err: unknown) => err instanceof TreasuryApiError && err.status === 307,
      );
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await elsewhere.close();
    }
  });

  it('a reply of the wrong shape is never used (a malformed signature is not a signature)', async () => {
    treasury.handler = () => ({ status: 200, body: { ...signedFor(requirements()), signature: 'not-hex' } });
    await assert.rejects(
      client().pay(WALLET_ID, { paymentRequirements: requirements() }),
      (err: unknown) => err instanceof InvalidTreasuryReplyError && /signature/.test(err.message),
    );
    treasury.handler = () => ({ status: 200, body: 'ok' });
    await assert.rejects(client().getWallet(WALLET_ID), InvalidTreasuryReplyError);
  });

  it('unreachable Treasury and time-outs are TreasuryUnreachableError', async () => {
    const url = treasury.url;
    await treasury.close();
    await assert.rejects(
      new TreasuryClient({ apiUrl: url, token: 'xx_pat_test' }).listWallets(),
      (err: unknown) => err instanceof TreasuryUnreachableError && err.code === 'treasury_unreachable',
    );
    treasury = await scriptedServer(() => new Promise(() => {}));
    await assert.rejects(
      new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test', timeoutMs: 100 }).listWallets(),
      TreasuryUnreachableError,
    );
  });

  it('mapRecoveryError: raise_pat_cap → PatCapReachedError (user_message, settings_url unchanged), reauthenticate → ReauthenticateError, anything else re-raised as it came', () => {
    const cap = mapRecoveryError(new TreasuryApiError(429, CAP_BODY));
    assert.ok(cap instanceof PatCapReachedError);
    assert.equal(cap.code, 'MGMT_6014');
    assert.equal(cap.user_message, CAP_BODY.user_message);
    assert.equal(cap.userMessage, CAP_BODY.user_message);
    assert.equal(cap.settings_url, CAP_BODY.recovery.settings_url);
    assert.equal(cap.settingsUrl, CAP_BODY.recovery.settings_url);
    assert.equal(cap.currentCapUsd, '5');
    assert.equal(cap.attemptedAmountUsd, '0.01');
    assert.ok(cap.apiError instanceof TreasuryApiError && cap.cause === cap.apiError);

    const reauth = mapRecoveryError(
      new TreasuryApiError(401, {
        error_code: 'invalid_token',
        user_message: 'Sign in again.',
        recovery: { kind: 'reauthenticate', cli_command: 'xx init' },
      }),
    );
    assert.ok(reauth instanceof ReauthenticateError);
    assert.deepEqual(
      [reauth.code, reauth.user_message, reauth.recovery.cli_command],
      ['reauthenticate', 'Sign in again.', 'xx init'],
    );

    for (const body of [
      { error_code: 'insufficient_funds', recovery: { kind: 'fund_wallet', deposit_url: 'x' } },
      { error_code: 'something_new', recovery: { kind: 'future_kind' } },
      { error_code: 'policy_denied', decision_id: 'pd_1' },
    ]) {
      const original = new TreasuryApiError(403, body);
      assert.equal(mapRecoveryError(original), original);
    }
    const other = new Error('boom');
    assert.equal(mapRecoveryError(other), other);
  });
});
