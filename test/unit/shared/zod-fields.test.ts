/**
 * The schema walker the hostile-input suites derive their fields from (test/support/zod-fields.ts) and the plan
 * it feeds (test/support/hostile-catalogue-plan.ts): every field through every wrapper, one field replaced at a
 * time, a refusal counted for a field only when it is that field's.
 */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { sampleVectors, VECTOR_CLASSES, verdict } from '../../support/hostile-catalogue-plan.js';
import { fieldsOf, holds, setAt, type Step } from '../../support/zod-fields.js';

const schema = z
  .object({
    label: z.string().optional(),
    limits: z.object({ cap: z.number().nullable(), window: z.number() }).strict().default({ cap: null, window: 1 }),
    tags: z.array(z.string()).max(3),
    caps: z.unknown().pipe(z.record(z.string().regex(/^[a-z]+$/), z.string())),
    when: z.preprocess((v) => v, z.object({ at: z.number() })),
    either: z.union([
      z.object({ kind: z.literal('a'), a: z.string() }).strict(),
      z.object({ kind: z.literal('b'), b: z.number() }).strict(),
    ]),
    lazy: z.lazy(() => z.object({ deep: z.boolean() })),
  })
  .strict();

describe('zod-fields: the fields of a schema, for hostile inputs', () => {
  it('finds every field through optional, default, nullable, arrays, records, pipes, unions and lazies', () => {
    assert.deepEqual(
      fieldsOf(schema).map((f) => f.name),
      [
        'label',
        'limits',
        'limits.cap',
        'limits.window',
        'tags',
        'tags[0]',
        'caps',
        'caps{key}',
        'caps{}',
        'when',
        'when.at',
        'either',
        'either.kind',
        'either.a',
        'either.b',
        'lazy',
        'lazy.deep',
      ],
    );
  });

  it('replaces one field, making missing parents, and keeps `__proto__` an own key', () => {
    const base = { tags: ['x'], caps: { search: '1' } };
    const steps = (name: string) => fieldsOf(schema).find((f) => f.name === name)!.steps;
    assert.deepEqual(setAt(base, steps('tags[0]'), 5), { tags: [5], caps: { search: '1' } });
    assert.deepEqual(setAt(base, steps('caps{}'), null), { tags: ['x'], caps: { search: null } });
    assert.deepEqual(setAt(base, steps('caps{key}'), 'A B'), { tags: ['x'], caps: { 'A B': '1' } });
    assert.deepEqual(setAt(base, steps('limits.cap'), 'x'), { ...base, limits: { cap: 'x' } });
    const proto = setAt({}, [{ key: '__proto__' }], 1) as object;
    assert.ok(Object.hasOwn(proto, '__proto__'));
    assert.deepEqual(base, { tags: ['x'], caps: { search: '1' } }, 'the base is not changed');
    assert.equal(holds(base, steps('caps{key}')), true);
    assert.equal(holds(base, steps('limits.cap')), false);
  });

  it("counts a refusal for a field only when it is that field's", () => {
    const base = { tags: [], caps: {}, when: { at: 1 }, either: { kind: 'a', a: 'x' }, lazy: { deep: true } };
    assert.ok(schema.safeParse(base).success);
    const at = (name: string): Step[] => fieldsOf(schema).find((f) => f.name === name)!.steps;
    const of = (name: string, value: unknown) => verdict(schema, base, at(name), setAt(base, at(name), value));
    assert.deepEqual(of('label', 'fine'), { send: false, counts: false }, 'a well-formed value is not sent');
    assert.deepEqual(of('label', 5), { send: true, counts: true });
    assert.deepEqual(of('label', 'a\u0000b'), { send: true, counts: true }, 'NUL is refused whatever the schema');
    // The base holds no `limits`: a made parent that lacks `window` is refused, but not for `cap`'s value.
    assert.deepEqual(of('limits.cap', 1), { send: true, counts: false });
    assert.deepEqual(of('limits.cap', 'x'), { send: true, counts: true });
    // A field of the union's other option, set in this option: an unknown key there, not the value refused.
    assert.deepEqual(of('either.b', 'x'), { send: true, counts: false });
    assert.deepEqual(of('either.kind', 'c'), { send: true, counts: true });
  });

  it('samples every list of the table for every field, rotating from field to field', () => {
    const size = { any: 8, perClass: 1 };
    const first = sampleVectors(0, size);
    const second = sampleVectors(1, size);
    assert.deepEqual(new Set(first.map((v) => v.vectorClass)), new Set(Object.keys(VECTOR_CLASSES)));
    const anyOf = (s: typeof first) => s.filter((v) => v.vectorClass === 'any').map((v) => v.value);
    assert.deepEqual([...anyOf(first), ...anyOf(second)], VECTOR_CLASSES.any, 'two fields share `any` out');
    assert.deepEqual(sampleVectors(0, size), first, 'deterministic');
  });
});
