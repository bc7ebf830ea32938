/**
 * The hostile frames of one signer method, made by walking its params schema (SIGNER_METHODS[method].params,
 * signer/protocol/signer-protocol.ts) with ./zod-fields.ts: the params as a whole and every field at any depth get
 * every value of the table of test/vectors/hostile-inputs.json (and a few values of their own, by field name).
 * Pure: it plans, test/integration/signer/signer-hostile-frames.test.ts sends.
 *
 * The wire schema tells hostile values from well-formed ones (as for the routes: ./hostile-catalogue-plan.ts). A
 * value it refuses must be refused as `invalid_request`, and counts for its field as a route's does. A value it accepts is
 * not sent (a domain name may read `1.00 USD`, and a well-formed address could name the base's own wallet), but
 * at a key reference: a well-formed reference the signer never made is refused (`expect: 'no_key'`).
 *
 * Defends: a method or a field of the signer protocol that no hostile frame reaches.
 */
import type { z } from 'zod';
import { VECTOR_CLASSES, verdict } from './hostile-catalogue-plan.js';
import { fieldsOf, holds, setAt } from './zod-fields.js';

/** Values thrown at a field besides the table's, by the field's own name (its last key). */
export const FIELD_EXTRAS: Record<string, readonly unknown[]> = {
  account_key_ref: ['p11:v1:acct:' + 'A'.repeat(100), 'p11:v1:wal:AAAA', 'p11:v2:wal:' + 'A'.repeat(96), 'aws:kms:x'],
  wallet_key_ref: ['p11:v1:wal:AAAA', 'p11:v1:acct:' + 'A'.repeat(100), 'p11:v2:wal:' + 'A'.repeat(96), 'aws:kms:x'],
  chainId: [84532.5, -84532, '84532', 0],
  version: [0, -1, 1.5, 2 ** 53],
  issued_at: [-1, 1.5, 2 ** 53],
};

export interface SignerCall {
  /** A field (`domain.name`), or `(params)` for the params as a whole. */
  field: string;
  vectorClass: string;
  value: unknown;
  params: unknown;
  /** `invalid`: the schema refuses it; `no_key`: a well-formed reference to no key. */
  expect: 'invalid' | 'no_key';
  /** Whether its refusal is the field's (see ./hostile-catalogue-plan.ts, verdict). */
  counts: boolean;
}

/** Every hostile frame's params for `method`, and the fields they attack (`(params)` first). */
export function planSignerMethod(schema: z.ZodType, bases: unknown[]): { calls: SignerCall[]; fields: string[] } {
  const calls: SignerCall[] = [];
  for (const value of VECTOR_CLASSES.any!)
    if (!schema.safeParse(value).success)
      calls.push({ field: '(params)', vectorClass: 'any', value, params: value, expect: 'invalid', counts: true });
  const fields = fieldsOf(schema);
  for (const field of fields) {
    const base = bases.find((b) => holds(b, field.steps)) ?? bases[0];
    const last = field.steps.at(-1);
    const name = last && 'key' in last ? last.key : '';
    const values = [
      ...Object.entries(VECTOR_CLASSES).flatMap(([vectorClass, list]) => list.map((value) => ({ vectorClass, value }))),
      ...(FIELD_EXTRAS[name] ?? []).map((value) => ({ vectorClass: 'field_extras', value })),
    ];
    for (const { vectorClass, value } of values) {
      const params = setAt(base, field.steps, value);
      // The wire carries any well-formed JSON text: the schema alone says what is refused.
      const { send, counts } = verdict(schema, base, field.steps, params, false);
      if (send) calls.push({ field: field.name, vectorClass, value, params, expect: 'invalid', counts });
      else if (name.endsWith('_key_ref'))
        calls.push({ field: field.name, vectorClass, value, params, expect: 'no_key', counts: false });
    }
  }
  return { calls, fields: ['(params)', ...fields.map((f) => f.name)] };
}
