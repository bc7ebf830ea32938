/**
 * The API's JSON variables, network → value (TREASURY_RPC_URLS, TREASURY_LEDGER_CONFIRMATIONS): unset, the
 * defaults; set, laid over the defaults; malformed JSON or a value out of its schema refused at start with a
 * message naming the variable.
 */
import assert from 'node:assert/strict';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

const BASE_ENDPOINTS = { 'eip155:8453': 'https://mainnet.base.org', 'eip155:84532': 'https://sepolia.base.org' };

describe('app config: JSON variables per network', () => {
  it('unset or empty: the public Base endpoints, Base mainnet 10 confirmations', () => {
    for (const env of [{}, { TREASURY_RPC_URLS: '', TREASURY_LEDGER_CONFIRMATIONS: '' }]) {
      const config = loadAppConfig(env);
      assert.deepEqual(config.rpcUrls, BASE_ENDPOINTS);
      assert.deepEqual(config.confirmations, { 'eip155:8453': 10 });
      assert.ok(Object.isFrozen(config.confirmations));
    }
  });

  it('set: laid over the defaults', () => {
    const config = loadAppConfig({
      TREASURY_RPC_URLS: '{"eip155:84532":"http://127.0.0.1:8545","eip155:31337":"http://127.0.0.1:8546"}',
      TREASURY_LEDGER_CONFIRMATIONS: '{"eip155:84532":3}',
    });
    assert.deepEqual(config.rpcUrls, {
      'eip155:8453': 'https://mainnet.base.org',
      'eip155:84532': 'http://127.0.0.1:8545',
      'eip155:31337': 'http://127.0.0.1:8546',
    });
    assert.deepEqual(config.confirmations, { 'eip155:8453': 10, 'eip155:84532': 3 });
  });

  it('malformed JSON: refused with an example', () => {
    assert.throws(() => loadAppConfig({ TREASURY_RPC_URLS: '{eip155:84532}' }), {
      message:
        'invalid configuration: TREASURY_RPC_URLS: expected JSON such as {"eip155:84532":"http://127.0.0.1:8545"}',
    });
    assert.throws(() => loadAppConfig({ TREASURY_LEDGER_CONFIRMATIONS: '{"eip155:8453":10' }), {
      message: 'invalid configuration: TREASURY_LEDGER_CONFIRMATIONS: expected JSON such as {"eip155:8453":10}',
    });
  });

  it('a value its schema refuses: refused, naming the variable and the network', () => {
    assert.throws(
      () => loadAppConfig({ TREASURY_RPC_URLS: '{"eip155:84532":"ftp://rpc.example"}' }),
      /^ConfigError: invalid configuration: TREASURY_RPC_URLS: eip155:84532: expected an http\(s\) URL$/,
    );
    assert.throws(
      () => loadAppConfig({ TREASURY_LEDGER_CONFIRMATIONS: '{"eip155:8453":0}' }),
      /^ConfigError: invalid configuration: TREASURY_LEDGER_CONFIRMATIONS: eip155:8453: /,
    );
    assert.throws(
      () => loadAppConfig({ TREASURY_LEDGER_CONFIRMATIONS: '{"base":2}' }),
      /^ConfigError: invalid configuration: TREASURY_LEDGER_CONFIRMATIONS: base: /,
    );
  });
});
