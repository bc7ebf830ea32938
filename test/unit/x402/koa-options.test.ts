/**
 * Seller middleware configuration: one test per configuration error thrown at construction, all problems
 * reported at once, environment fallbacks, defaults per network, and route-price keys.
 */
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import {
  routePriceKey,
  resolveX402Options,
  X402ConfigError,
  x402Koa,
  type X402KoaOptions,
} from '../../../src/x402/koa/index.js';
import x402KoaDefault from '../../../src/x402/koa/index.js';
import { hostile } from './x402-fixtures.js';

const PAT = 'xx_pat_testtesttesttesttesttesttesttesttesttest123';
const base: X402KoaOptions = {
  token: PAT,
  price: '0.01',
  pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  facilitator_url: 'http://127.0.0.1:4022',
  api_url: 'http://127.0.0.1:8080',
  env: {},
};

function problemsOf(options: Partial<X402KoaOptions>): string[] {
  try {
    resolveX402Options({ ...base, ...options } as X402KoaOptions);
  } catch (err) {
    assert.ok(err instanceof X402ConfigError, String(err));
    return [...err.problems];
  }
  return [];
}

function assertProblem(options: Partial<X402KoaOptions>, pattern: RegExp) {
  const problems = problemsOf(options);
  assert.ok(
    problems.some((p) => pattern.test(p)),
    `expected ${pattern} in ${JSON.stringify(problems)}`,
  );
}

describe('x402 Koa middleware: configuration', () => {
  it('accepts a minimal configuration and fills the spec defaults', () => {
    const c = resolveX402Options(base);
    assert.deepEqual(c.schemes, ['exact']);
    assert.equal(c.network, 'eip155:84532');
    assert.equal(c.asset, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
    assert.equal(c.assetName, 'USDC');
    assert.equal(c.assetVersion, '2');
    assert.equal(c.maxTimeoutSeconds, 300);
    assert.equal(c.priceMicro, 10_000n);
    assert.ok(Object.isFrozen(c));
    const mainnet = resolveX402Options({ ...base, network: 'eip155:8453' });
    assert.equal(mainnet.asset, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    assert.equal(mainnet.assetName, 'USD Coin');
  });

  it('x402Koa is also the default export and returns Koa middleware', () => {
    assert.equal(x402KoaDefault, x402Koa);
    const mw = x402Koa({ ...base, registry: new Registry() });
    assert.equal(typeof mw, 'function');
    assert.equal(mw.length, 2);
  });

  it('error: a scheme other than exact or upto', () =>
    assertProblem({ schemes: ['exact', 'stream'] }, /"stream" is not supported/));
  it('error: upto without facilitator_address', () =>
    assertProblem({ schemes: ['upto'] }, /facilitator_address is required when "upto"/));
  it('upto with facilitator_address is fine', () =>
    assert.deepEqual(
      problemsOf({ schemes: ['exact', 'upto'], facilitator_address: '0x1111111111111111111111111111111111111111' }),
      [],
    ));
  it('error: missing token', () => assertProblem({ token: '' }, /token \(a service PAT\) is required/));
  it('error: a removed master key as token', () =>
    assertProblem({ token: 'xx_live_sk_abcdefabcdefabcdef' }, /removed master key/));
  it('error: missing price', () =>
    assertProblem({ price: undefined as unknown as string }, /price \(USD decimal string\) is required/));
  it('error: missing pay_to (and no XX_PAY_TO)', () =>
    assertProblem({ pay_to: undefined }, /pay_to \(or env XX_PAY_TO\) is required/));
  it('error: malformed api_url', () => assertProblem({ api_url: 'ftp://x' }, /api_url must be an http/));
  it('error: malformed facilitator_url', () =>
    assertProblem({ facilitator_url: 'ftp://x' }, /facilitator_url must be an http/));
  it('error: malformed endpoint_id', () =>
    assertProblem({ endpoint_id: 'endpoint-1' }, /endpoint_id must look like ep_/));
  it('error: unknown network without asset settings', () =>
    assertProblem({ network: 'eip155:31337' }, /no built-in USDC/));
  it('unknown network with asset settings is fine', () =>
    assert.deepEqual(
      problemsOf({
        network: 'eip155:31337',
        asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        asset_name: 'USDC',
        asset_version: '2',
      }),
      [],
    ));
  it('error: max_timeout_seconds out of range', () => assertProblem({ max_timeout_seconds: 0 }, /max_timeout_seconds/));

  it('error: every hostile address as pay_to (all-lower and all-upper hex are accepted)', () => {
    for (const value of hostile.evm_address!) {
      const problems = problemsOf({ pay_to: value as string });
      const acceptable = /^0x([0-9a-f]{40}|[0-9A-F]{40})$/.test(String(value)) && !/^0x0{40}$/.test(String(value));
      assert.equal(problems.length === 0, acceptable, `${value}: ${problems.join('; ')}`);
    }
    assertProblem({ pay_to: '0x209693BC6AFC0C5328BA36FAF03C514EF312287c' }, /checksum/);
    assertProblem({ pay_to: '0x0000000000000000000000000000000000000000' }, /zero address/);
    assertProblem({ schemes: ['upto'], facilitator_address: '0x123' }, /facilitator_address must be/);
  });

  it('error: every hostile USD price', () => {
    for (const value of hostile.usd_amount!) {
      if (value === '0') continue;
      assertProblem({ price: value as string }, /price must be a USD decimal string/);
    }
  });

  it('error: bad route_prices entries and keys', () => {
    assertProblem({ route_prices: { '/x': '1e2' } }, /route_prices\["\/x"\]/);
    assertProblem({ route_prices: { x: '1' } }, /absolute path/);
    assertProblem({ route_prices: { '/A': '1', '/a/': '2' } }, /two keys for the same path/);
  });

  it('lists every problem in one error', () => {
    const problems = problemsOf({
      token: '',
      price: 'abc',
      pay_to: '0x123',
      schemes: ['foo', 'upto'],
      api_url: 'ftp://nope',
    });
    assert.equal(problems.length, 6, problems.join('\n'));
    assert.throws(
      () => x402Koa({ ...base, token: '', price: 'abc' }),
      (err: unknown) => err instanceof X402ConfigError && /token.*price/s.test(err.message),
    );
  });

  it('reads XX_PAY_TO, FACILITATOR_URL, XX_API_URL, XX_ALLOW_LOCAL_ONLY, XX_DISABLE_BODY_CAPTURE from env', () => {
    const c = resolveX402Options({
      token: PAT,
      price: '1',
      env: {
        XX_PAY_TO: base.pay_to,
        FACILITATOR_URL: 'http://f.test/',
        XX_API_URL: 'http://p.test',
        XX_ALLOW_LOCAL_ONLY: '1',
        XX_DISABLE_BODY_CAPTURE: '1',
      },
    });
    assert.equal(c.payTo, base.pay_to);
    assert.equal(c.facilitatorUrl, 'http://f.test');
    assert.equal(c.apiUrl, 'http://p.test');
    assert.equal(c.allowLocalOnly, true);
    assert.equal(c.disableBodyCapture, true);
  });

  it("api_url: the option, else XX_API_URL, else Treasury's default address", () => {
    const { api_url: _omitted, ...withoutApi } = base;
    assert.equal(resolveX402Options({ ...withoutApi, env: {} }).apiUrl, 'http://127.0.0.1:8402');
    assert.equal(resolveX402Options({ ...withoutApi, env: { XX_API_URL: 'http://p.test' } }).apiUrl, 'http://p.test');
    assert.equal(resolveX402Options({ ...base, env: { XX_API_URL: 'http://p.test' } }).apiUrl, 'http://127.0.0.1:8080');
  });

  it('route price keys ignore case, percent-encoding, duplicate and trailing slashes', () => {
    for (const spelling of ['/Premium/', '//premium', '/%70remium']) assert.equal(routePriceKey(spelling), '/premium');
    assert.equal(routePriceKey('/'), '/');
    assert.equal(routePriceKey('/%E0%A4%A'), '/%e0%a4%a');
  });
});
