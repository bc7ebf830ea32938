/**
 * Answers whose JSON text was taken once (src/api/http/json-answer.ts): the same text each time, the object
 * frozen so that the answer cannot drift from the text stored with it, and the answer's headers as Koa gives
 * any object; an object never serialised there is answered as the object itself.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { Socket } from 'node:net';
import Koa from 'koa';
import { answerJson, jsonTextOnce } from '../../../src/api/http/json-answer.js';

function context() {
  const req = new http.IncomingMessage(new Socket());
  return new Koa().createContext(req, new http.ServerResponse(req));
}

describe('json answer', () => {
  it("takes an object's text once and freezes the object", () => {
    const payment = { signature: '0xab', amount_usd: '0.01', headroom: { daily_usd: '1.00' } };
    const text = jsonTextOnce(payment);
    assert.equal(text, JSON.stringify({ signature: '0xab', amount_usd: '0.01', headroom: { daily_usd: '1.00' } }));
    assert.ok(Object.isFrozen(payment));
    assert.equal(Reflect.set(payment, 'signature', '0xcd'), false, 'a frozen answer takes no change');
    assert.equal(payment.signature, '0xab');
    assert.equal(jsonTextOnce(payment), text);
  });

  it('answers with that text, with the Content-Type Koa gives an object', () => {
    const payment = { signature: '0xab' };
    const text = jsonTextOnce(payment);
    const asText = context();
    answerJson(asText, payment);
    const asObject = context();
    asObject.body = { signature: '0xab' };
    assert.equal(asText.body, text);
    assert.equal(asText.response.get('Content-Type'), asObject.response.get('Content-Type'));
    assert.equal(asText.response.get('Content-Type'), 'application/json; charset=utf-8');
  });

  it('answers an object never serialised there as the object', () => {
    const ctx = context();
    const other = { a: 1 };
    answerJson(ctx, other);
    assert.equal(ctx.body, other);
    assert.ok(!Object.isFrozen(other));
  });
});
