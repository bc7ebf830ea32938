/** redactUrl / redactUrlsIn: only scheme, host and port of a URL ever leave; the rest of a text is unchanged. */
import assert from 'node:assert/strict';
import { redactUrl, redactUrlsIn } from '../../../src/shared/redact-url.js';
import { describeError } from '../../../src/api/log/describe-error.js';
import { databaseError } from '../../builders/database-error.js';

describe('redactUrl', () => {
  it('keeps scheme, host and port; drops user-info, path, query and fragment', () => {
    assert.equal(redactUrl('https://base-mainnet.g.alchemy.com/v2/KEY123'), 'https://base-mainnet.g.alchemy.com');
    assert.equal(redactUrl('https://user:pass@rpc.example:8545/x?apikey=KEY#frag'), 'https://rpc.example:8545');
    assert.equal(redactUrl('http://[::1]:8545/v2/KEY'), 'http://[::1]:8545');
    assert.equal(redactUrl('wss://ws.example/ws/KEY'), 'wss://ws.example');
    assert.equal(redactUrl('postgres://treasury:hunter2@db:5432/treasury'), 'postgres://db:5432');
    assert.equal(redactUrl(new URL('https://h/KEY')), 'https://h');
    assert.equal(redactUrl('not a url KEY'), '[url]');
  });

  it('redactUrlsIn rewrites every URL in a text and leaves the rest', () => {
    const text =
      'HTTP request failed.\n\nURL: https://u:p@rpc.example/v2/KEY1?apikey=KEY2\nDetails: see (https://docs.example/a/KEY3). Also http://[::1]:8545/KEY4]';
    const out = redactUrlsIn(text);
    for (const key of ['KEY1', 'KEY2', 'KEY3', 'KEY4', 'u:p']) assert.ok(!out.includes(key), `${key} in ${out}`);
    assert.equal(
      out,
      'HTTP request failed.\n\nURL: https://rpc.example\nDetails: see (https://docs.example). Also http://[::1]:8545]',
    );
  });

  it('runs in linear time on long hostile texts', () => {
    for (const text of [
      'http://'.repeat(50_000),
      `https://a/${'.'.repeat(100_000)}x`,
      'a.'.repeat(100_000),
      `${'https:/'.repeat(30_000)}`,
    ]) {
      const started = process.hrtime.bigint();
      redactUrlsIn(text);
      assert.ok(process.hrtime.bigint() - started < 200_000_000n, 'under 200 ms');
    }
  });
});

describe('describeError', () => {
  it('a database error: SQLSTATE and constraint, no message, detail or stack', () => {
    const err = databaseError('ERROR', '23505');
    err.message = 'insert into "t" ("v") values ($1) - duplicate key value "SECRETVALUE"';
    err.detail = 'Key (v)=(SECRETVALUE) already exists.';
    err.constraint = 't_v_key';
    (err as unknown as { bindings: string[] }).bindings = ['SECRETVALUE'];
    const described = describeError(err);
    assert.deepEqual(described, {
      type: 'database_error',
      sqlstate: '23505',
      severity: 'ERROR',
      constraint: 't_v_key',
    });
  });

  it('any other error: URLs cut in the message, stack and causes; extra fields (url, bindings) never copied', () => {
    const inner = Object.assign(new Error('HTTP request failed.\nURL: https://rpc.example/v2/SECRETKEY'), {
      url: 'https://rpc.example/v2/SECRETKEY',
    });
    const outer = Object.assign(new Error('wrapped', { cause: inner }), {
      bindings: ['SECRETVALUE'],
      sql: 'select $1',
    });
    const text = JSON.stringify(describeError(outer));
    assert.ok(!text.includes('SECRETKEY') && !text.includes('SECRETVALUE'), text);
    assert.ok(text.includes('https://rpc.example'), text);
  });
});

describe('a facilitator object that fails with a viem-style message', () => {
  it('reports the failure with the RPC endpoint cut to its origin', async () => {
    const { wrapFacilitatorObject } = await import('../../../src/x402/facilitator-client.js');
    const failing = {
      verify: () =>
        Promise.reject(
          new Error(
            'HTTP request failed.\n\nURL: https://base-sepolia.g.alchemy.com/v2/SECRETKEY?apikey=SECRETQ\nDetails: fetch failed',
          ),
        ),
      settle: () => Promise.reject(new Error('settle failed at https://u:SECRETPW@rpc.example/x')),
    };
    const client = wrapFacilitatorObject(failing as never);
    const verified = await client.verify({ paymentPayload: {}, paymentRequirements: {} } as never);
    const settled = await client.settle({ paymentPayload: {}, paymentRequirements: {} } as never);
    const text = JSON.stringify([verified, settled]);
    assert.ok(!/SECRET/.test(text), text);
    assert.ok(text.includes('https://base-sepolia.g.alchemy.com') && text.includes('https://rpc.example'), text);
  });
});
