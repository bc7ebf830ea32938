/**
 * The fields of a zod (v4) schema, found by walking it: every key of every object, the items of every array or
 * tuple and the values of every record, at any depth, through the wrappers (optional, nullable, default,
 * catch, readonly, lazy), both sides of a pipe (the output of a preprocess), intersections and into every option of a union. Each field is a path of steps
 * from the root; `setAt` builds a value with one field replaced. The hostile-input suites walk the route
 * catalogue's and the signer protocol's schemas with it, so a field added to a schema is attacked without a
 * suite naming it.
 *
 * Defends: a schema field that no hostile-input suite ever reaches because its list of fields was written by
 * hand. Does not defend: fields a schema does not declare (a loose object's extra keys, a refinement's reading
 * of a string): they have no step here.
 */
import type { z } from 'zod';

/** One step into a value: an object's key, an array's (or tuple's) item at `index`, a record's value or key. */
export type Step = { key: string } | { index: number } | { entry: 'value' | 'key' };

export interface Field {
  steps: Step[];
  /** The steps as text: `a.b`, `a[0]`, `a{}` (a record's value), `a{key}` (a record's key). */
  name: string;
  /** The schema at the field, wrappers left on (what the field accepts). */
  schema: z.ZodType;
}

type Def = { type: string; [k: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema a wrapper stands for: its inner type. */
function unwrap(s: z.ZodType): z.ZodType {
  for (let d = defOf(s); ; d = defOf(s)) {
    if (['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional'].includes(d.type))
      s = d.innerType as z.ZodType;
    else if (d.type === 'lazy') s = (d.getter as () => z.ZodType)();
    else return s;
  }
}

export const nameOf = (steps: Step[]): string =>
  steps
    .map((st, i) =>
      'key' in st ? `${i ? '.' : ''}${st.key}` : 'index' in st ? `[${st.index}]` : st.entry === 'key' ? '{key}' : '{}',
    )
    .join('');

/** Every field of `schema`, parents before their children, each path once (the first schema met for it). */
export function fieldsOf(schema: z.ZodType): Field[] {
  const out = new Map<string, Field>();
  const visiting = new Set<z.ZodType>();
  const visit = (s: z.ZodType, steps: Step[], declared: z.ZodType) => {
    const name = nameOf(steps);
    if (steps.length && !out.has(name)) out.set(name, { steps, name, schema: declared });
    const inner = unwrap(s);
    if (visiting.has(inner)) return; // a recursive schema: each level once
    visiting.add(inner);
    const d = defOf(inner);
    if (d.type === 'object')
      for (const [key, child] of Object.entries(d.shape as Record<string, z.ZodType>))
        visit(child, [...steps, { key }], child);
    else if (d.type === 'array') visit(d.element as z.ZodType, [...steps, { index: 0 }], d.element as z.ZodType);
    else if (d.type === 'tuple')
      (d.items as z.ZodType[]).forEach((item, index) => visit(item, [...steps, { index }], item));
    else if (d.type === 'record') {
      visit(d.keyType as z.ZodType, [...steps, { entry: 'key' }], d.keyType as z.ZodType);
      visit(d.valueType as z.ZodType, [...steps, { entry: 'value' }], d.valueType as z.ZodType);
    } else if (d.type === 'union') for (const option of d.options as z.ZodType[]) visit(option, steps, declared);
    else if (d.type === 'pipe') {
      // Both sides: a refined `unknown` piped into a record has its fields on the output side (a transform none).
      if (defOf(d.in as z.ZodType).type !== 'transform') visit(d.in as z.ZodType, steps, declared);
      visit(d.out as z.ZodType, steps, declared);
    } else if (d.type === 'intersection') {
      visit(d.left as z.ZodType, steps, declared);
      visit(d.right as z.ZodType, steps, declared);
    }
    visiting.delete(inner);
  };
  visit(schema, [], schema);
  return [...out.values()];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A value as an object key: a string as it is, anything else as its JSON. */
const asKey = (value: unknown): string => (typeof value === 'string' ? value : String(JSON.stringify(value)));

/** An object with an own property `key`, even for `__proto__` (an assignment would set the prototype). */
function withOwn(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/**
 * `base` (not changed) with the value at `steps` set to `value`; missing parents are made (an object, or an
 * array of one item). A record's value goes under its first key (`k` in an empty one); a record's key replaces
 * its first key, keeping that key's value.
 */
export function setAt(base: unknown, steps: Step[], value: unknown): unknown {
  if (!steps.length) return value;
  const [step, ...rest] = steps as [Step, ...Step[]];
  if ('entry' in step && step.entry === 'key') {
    const [first, ...others] = Object.entries(isObject(base) ? base : {});
    return withOwn(Object.fromEntries(others), asKey(value), first?.[1] ?? null);
  }
  if ('index' in step) {
    const list = Array.isArray(base) ? [...(base as unknown[])] : [];
    while (list.length <= step.index) list.push(undefined);
    list[step.index] = setAt(list[step.index], rest, value);
    return list;
  }
  const object = isObject(base) ? { ...base } : {};
  const key = 'key' in step ? step.key : (Object.keys(object)[0] ?? 'k');
  return withOwn(object, key, setAt(object[key], rest, value));
}

/** Whether `base` holds a value at `steps` (a record's key: a record with an entry). */
export function holds(base: unknown, steps: Step[]): boolean {
  let at = base;
  for (const step of steps) {
    if ('index' in step) at = Array.isArray(at) ? at[step.index] : undefined;
    else if (!isObject(at)) return false;
    else at = 'key' in step ? at[step.key] : step.entry === 'key' ? Object.keys(at)[0] : Object.values(at)[0];
  }
  return at !== undefined;
}

/** A zod issue, as far as a field's is told apart: its path, and a union's issues per option. */
export interface IssueLike {
  code?: string;
  path: readonly PropertyKey[];
  errors?: IssueLike[][];
}

/**
 * Whether a zod issue is about the field at `steps`: its path and the steps lie on one line (one is a prefix of
 * the other), a union's when an option's issue is. A key no schema knows is not the field's value refused.
 */
export function touches(issue: IssueLike, steps: Step[]): boolean {
  if (issue.code === 'unrecognized_keys') return false;
  const n = Math.min(issue.path.length, steps.length);
  for (let i = 0; i < n; i++) {
    const step = steps[i]!;
    const p = issue.path[i];
    if ('key' in step ? p !== step.key : 'index' in step ? p !== step.index : typeof p !== 'string') return false;
  }
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return true;
  const below = steps.slice(issue.path.length);
  return issue.errors.some((option) => option.some((inner) => touches(inner, below)));
}
