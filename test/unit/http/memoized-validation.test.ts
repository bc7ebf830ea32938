/** A route schema's parses remembered by body text (src/api/http/memoized-validation.ts): hits, refusals, bounds, freezing. */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { MemoizedValidation } from '../../../src/api/http/memoized-validation.js';
import { AppError } from '../../../src/api/errors/app-error.js';

/** A schema that counts how often zod ran it. */
function countingSchema() {
  const calls = { n: 0 };
  const schema = z
    .object({ amount: z.string().regex(/^[0-9]{1,6}$/), extra: z.object({ name: z.string() }).optional() })
    .strict()
    .refine(() => {
      calls.n++;
      return true;
    });
  return { schema, calls };
}

const sent = (body: unknown) => [JSON.stringify(body), body] as const;

describe('MemoizedValidation', () => {
  it('parses a body text once and answers it again from memory, the same frozen value', () => {
    const { schema, calls } = countingSchema();
    const memo = new MemoizedValidation(schema, { maxEntries: 8, maxTextChars: 1000 });
    const first = memo.validate(...sent({ amount: '12', extra: { name: 'USDC' } }));
    const again = memo.validate(...sent({ amount: '12', extra: { name: 'USDC' } }));
    assert.equal(calls.n, 1);
    assert.equal(again, first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.extra));
    assert.equal(Reflect.set(first.extra!, 'name', 'other'), false, 'nobody can change what every request shares');
    assert.equal(first.extra!.name, 'USDC');
    memo.validate(...sent({ amount: '13' }));
    assert.equal(calls.n, 2, 'another text is parsed');
  });

  it('never remembers a refusal: each one is parsed again and refused with the same issues', () => {
    const { schema, calls } = countingSchema();
    const memo = new MemoizedValidation(schema, { maxEntries: 8, maxTextChars: 1000 });
    const refusal = () => {
      try {
        memo.validate(...sent({ amount: 'x' }));
      } catch (err) {
        assert.ok(err instanceof AppError);
        return { code: err.code, fields: err.fields };
      }
      assert.fail('accepted');
    };
    const first = refusal();
    assert.equal(first.code, 'invalid_request');
    assert.deepEqual(refusal(), first);
    assert.equal(calls.n, 2, 'parsed by the schema both times');
  });

  it('parses every time a text longer than maxTextChars, or no text at all', () => {
    const { schema, calls } = countingSchema();
    const memo = new MemoizedValidation(schema, { maxEntries: 8, maxTextChars: 10 });
    const long = sent({ amount: '123456' });
    memo.validate(...long);
    memo.validate(...long);
    memo.validate(undefined, { amount: '1' });
    memo.validate(undefined, { amount: '1' });
    assert.equal(calls.n, 4);
  });

  it('remembers at most maxEntries texts, forgetting the least recently used', () => {
    const { schema, calls } = countingSchema();
    const memo = new MemoizedValidation(schema, { maxEntries: 2, maxTextChars: 1000 });
    for (const amount of ['1', '2', '3']) memo.validate(...sent({ amount }));
    assert.equal(calls.n, 3);
    memo.validate(...sent({ amount: '3' }));
    memo.validate(...sent({ amount: '2' }));
    assert.equal(calls.n, 3, 'the two newest are remembered');
    memo.validate(...sent({ amount: '1' }));
    assert.equal(calls.n, 4, 'the oldest was forgotten');
  });
});
