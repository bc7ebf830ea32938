/**
 * The answer a `payment-identifier` keeps (src/x402/seller/payment-identifier-rule.ts `answerToStore`): the headers
 * that say what the stored bytes are (type, encoding, range, redirect target) and how they may be cached, most
 * needed first within what the store takes; a value that is not a well-formed header value (CR, LF, another
 * control, non-ASCII, too long) is never kept; whatever the paid work sent, the result is an answer the
 * platform's wire schema accepts.
 */
import assert from 'node:assert/strict';
import { storedAnswerSchema } from '../../../src/shared/payment-identifier-wire.js';
import { answerToStore, REPLAYED_HEADERS } from '../../../src/x402/seller/payment-identifier-rule.js';
import { hostile } from './x402-fixtures.js';

const RECEIPT = { 'PAYMENT-RESPONSE': 'eyJzdWNjZXNzIjp0cnVlfQ==', 'X-PAYMENT-RESPONSE': 'eyJzdWNjZXNzIjp0cnVlfQ==' };
const BODY = Buffer.from('paid bytes');

const store = (work: Record<string, string | undefined>, status = 200) =>
  answerToStore(status, work, RECEIPT, BODY, 1024);

describe('payment-identifier: the answer kept for a retry', () => {
  it('keeps what the bytes mean: a gzip answer its content-encoding, a 206 its range, a 3xx its location', () => {
    const gzip = store({ 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'Accept-Encoding' });
    assert.deepEqual(
      [gzip.headers['content-type'], gzip.headers['content-encoding'], gzip.headers.vary],
      ['application/json', 'gzip', 'Accept-Encoding'],
    );
    assert.equal(store({ 'content-range': 'bytes 0-9/100' }, 206).headers['content-range'], 'bytes 0-9/100');
    assert.equal(store({ location: '/report/2' }, 302).headers.location, '/report/2');
    const cached = store({ etag: '"v1"', 'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT', 'content-language': 'en' });
    assert.deepEqual(
      [cached.headers.etag, cached.headers['last-modified'], cached.headers['content-language']],
      ['"v1"', 'Tue, 01 Dec 2026 10:00:00 GMT', 'en'],
    );
    assert.equal(gzip.headers['payment-response'], RECEIPT['PAYMENT-RESPONSE']);
    assert.equal(Buffer.from(gzip.body_base64!, 'base64').toString(), 'paid bytes');
  });

  it('keeps nothing else the paid work sent', () => {
    const kept = store({ 'content-type': 'text/plain', 'set-cookie': 'a=1', 'x-handler-secret': 'leak' });
    assert.deepEqual(Object.keys(kept.headers).sort(), ['content-type', 'payment-response', 'x-payment-response']);
  });

  it('every header named at once: the receipt and the most needed ones, within what the store takes', () => {
    const all = Object.fromEntries(REPLAYED_HEADERS.map((name) => [name, 'v']));
    const kept = store(all);
    assert.deepEqual(Object.keys(kept.headers), [
      'content-type',
      'content-encoding',
      'content-range',
      'location',
      'cache-control',
      'vary',
      'payment-response',
      'x-payment-response',
    ]);
    assert.ok(storedAnswerSchema.safeParse(kept).success, 'the platform store takes it');
  });

  it('a value that is not a well-formed header value is not kept, the others are', () => {
    for (const bad of ['gzip\r\nSet-Cookie: a=1', 'gzip\n', 'a\u0000b', 'a\u001bb', 'caf\u00e9', 'x'.repeat(4097)]) {
      const kept = store({ 'content-type': 'text/plain', 'content-encoding': bad, etag: bad });
      assert.deepEqual(
        Object.keys(kept.headers).sort(),
        ['content-type', 'payment-response', 'x-payment-response'],
        JSON.stringify(bad).slice(0, 40),
      );
    }
  });

  it('whatever the paid work sent (the hostile table), the kept answer is one the platform store accepts', () => {
    const strings = Object.values(hostile)
      .flat()
      .filter((v): v is string => typeof v === 'string');
    for (const value of strings) {
      const work = Object.fromEntries(REPLAYED_HEADERS.map((name) => [name, value]));
      const parsed = storedAnswerSchema.safeParse(store(work));
      assert.ok(parsed.success, `${JSON.stringify(value).slice(0, 40)}: ${parsed.error?.message.slice(0, 200)}`);
    }
  });
});
