/**
 * The hostile calls of one catalogued route (src/api/api-catalog.ts), made by walking its catalogue schemas
 * (./zod-fields.ts): each body field, query key and path parameter gets a deterministic sample of the table of
 * test/vectors/hostile-inputs.json — some values of its `any` list and of every other list, rotating from field
 * to field so that a route's fields share the whole table out. Pure: it plans, the suite sends.
 *
 * The route's own schema tells the hostile values from the well-formed ones: a body or query the schema accepts is
 * not sent (a label may well read `1.00 USD`), unless it holds text no field may hold (NUL or a lone surrogate: the
 * body reader refuses it everywhere, src/api/http/middleware/json-body.ts). A call counts for its field only when
 * the schema refuses it for that field: the base held the field (the base parses, so only the field's value can
 * be refused), or an issue is on the field's path — so a field reached only through a body refused for something
 * else stays unreached.
 *
 * Defends: a catalogued route, body field, query key or path parameter that no hostile-input suite reaches.
 */
import querystring from 'node:querystring';
import type { z } from 'zod';
import type { CatalogEntry } from '../../src/api/http/openapi/catalog-entry.js';
import { asQuery, hostile } from './hostile-refusals.js';
import { fieldsOf, holds, setAt, touches, type IssueLike, type Step } from './zod-fields.js';

/** The lists of the table thrown at fields (the whole-body list aside: raw_bodies is thrown at whole bodies). */
export const VECTOR_CLASSES: Record<string, readonly unknown[]> = Object.fromEntries(
  Object.entries(hostile).filter(([name, list]) => Array.isArray(list) && !['notes', 'raw_bodies'].includes(name)),
);

/** How many values of each list a field gets: of `any` (the values of every type), and of each other list. */
export interface SampleSize {
  any: number;
  perClass: number;
}

/**
 * `{class, value}` pairs for the field numbered `seed`: `any` values of the `any` list and `perClass` of each
 * other, starting where the previous field's ended (so consecutive fields share a list out between them).
 */
export function sampleVectors(seed: number, size: SampleSize): Array<{ vectorClass: string; value: unknown }> {
  return Object.entries(VECTOR_CLASSES).flatMap(([vectorClass, list]) => {
    const count = Math.min(vectorClass === 'any' ? size.any : size.perClass, list.length);
    return Array.from({ length: count }, (_, j) => ({ vectorClass, value: list[(seed * count + j) % list.length] }));
  });
}

export type Where = 'body' | 'query' | 'path' | 'raw';

export interface HostileCall {
  where: Where;
  /** A body field (`a.b[0]`), a query key, a path parameter (`{id}`) or `(body)` for a raw body. */
  field: string;
  vectorClass: string;
  value: unknown;
  url: string;
  body?: unknown;
  raw?: string;
  /** Whether its refusal reaches the field (the schema refuses it there, or the body holds unstorable text). */
  counts: boolean;
}

/** What the catalogue promises every route's fields are attacked on: `METHOD path where field`. */
export const targetOf = (entry: CatalogEntry, where: Where, field: string) =>
  `${entry.method} ${entry.path} ${where} ${field}`;

/** Whether a value holds NUL or a lone surrogate in a string or a key, at any depth. */
export function holdsUnstorable(value: unknown): boolean {
  const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();
  if (typeof value === 'string') return bad(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => bad(k) || holdsUnstorable(v));
}

/**
 * The schema's verdict on a candidate: sent or not, and whether its refusal is the field's — always when the base
 * held the field (the base parses, only the field changed), else when an issue is on the field's path. With
 * `unstorable` (the API's bodies and queries), a candidate holding NUL or a lone surrogate is sent whatever the
 * schema says.
 */
export function verdict(schema: z.ZodType, base: unknown, steps: Step[], candidate: unknown, unstorable = true) {
  const parsed = schema.safeParse(candidate);
  if (unstorable && holdsUnstorable(candidate)) return { send: true, counts: true };
  if (parsed.success) return { send: false, counts: false };
  return { send: true, counts: holds(base, steps) || parsed.error.issues.some((i) => touches(i as IssueLike, steps)) };
}

/** Whether a concrete path (segments) is another catalogue route's for the same method. */
function isOtherRoute(catalogue: CatalogEntry[], entry: CatalogEntry, path: string): boolean {
  const segments = (path.endsWith('/') ? path.slice(0, -1) : path).split('/');
  return catalogue.some(
    (other) =>
      other !== entry &&
      other.method === entry.method &&
      other.path.split('/').length === segments.length &&
      other.path.split('/').every((p, i) => (p.startsWith('{') ? segments[i] !== '' : p === segments[i])),
  );
}

const queryText = (query: Record<string, string>) =>
  Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
    .join('&');

export interface RouteBases {
  bodies: unknown[];
  query: Record<string, string>;
  params: Record<string, string>;
}

/** Every hostile call of `entry` and the targets they attack; `seed` numbers the route's first field. */
export function planRoute(
  catalogue: CatalogEntry[],
  entry: CatalogEntry,
  bases: RouteBases,
  options: { seed: number; size: SampleSize },
): { calls: HostileCall[]; targets: string[] } {
  const calls: HostileCall[] = [];
  const targets: string[] = [];
  let seed = options.seed;
  const sample = () => sampleVectors(seed++, options.size);
  const pathWith = (params: Record<string, string>) =>
    entry.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => params[name] ?? '');
  const basePath = pathWith(bases.params);
  const baseQueryText = Object.fromEntries(Object.entries(bases.query).map(([k, v]) => [k, encodeURIComponent(v)]));
  const url = (path: string, query: Record<string, string>) =>
    Object.keys(query).length ? `${path}?${queryText(query)}` : path;
  const baseUrl = url(basePath, baseQueryText);
  const baseBody = entry.body ? bases.bodies[0] : undefined;

  for (const param of Object.keys(bases.params)) {
    targets.push(targetOf(entry, 'path', `{${param}}`));
    for (const { vectorClass, value } of sample()) {
      const path = pathWith({ ...bases.params, [param]: asQuery(value) });
      if (isOtherRoute(catalogue, entry, path)) continue;
      calls.push({
        where: 'path',
        field: `{${param}}`,
        vectorClass,
        value,
        url: url(path, baseQueryText),
        ...(baseBody === undefined ? {} : { body: baseBody }),
        counts: true,
      });
    }
  }

  if (entry.query)
    for (const field of fieldsOf(entry.query)) {
      const key = (field.steps[0] as { key?: string }).key;
      if (field.steps.length !== 1 || key === undefined) continue; // a query holds flat keys
      targets.push(targetOf(entry, 'query', key));
      for (const { vectorClass, value } of sample()) {
        const text = asQuery(value);
        const decoded = querystring.parse(`k=${text}`).k;
        const { send, counts } = verdict(entry.query, bases.query, field.steps, { ...bases.query, [key]: decoded });
        if (!send) continue;
        calls.push({
          where: 'query',
          field: key,
          vectorClass,
          value,
          url: url(basePath, { ...baseQueryText, [key]: text }),
          counts,
        });
      }
    }

  if (entry.body) {
    for (const field of fieldsOf(entry.body)) {
      targets.push(targetOf(entry, 'body', field.name));
      const base = bases.bodies.find((b) => holds(b, field.steps)) ?? bases.bodies[0];
      for (const { vectorClass, value } of sample()) {
        const candidate = setAt(base, field.steps, value);
        const { send, counts } = verdict(entry.body, base, field.steps, candidate);
        if (send)
          calls.push({ where: 'body', field: field.name, vectorClass, value, url: baseUrl, body: candidate, counts });
      }
    }
    for (const raw of hostile.raw_bodies as string[]) {
      // No body is the route's defaults when it may be left out.
      if (raw.trim() === '' && entry.bodyOptional) continue;
      let parsed: unknown;
      try {
        parsed = raw.trim() === '' ? undefined : JSON.parse(raw);
      } catch {
        parsed = undefined;
      }
      if (parsed !== undefined && entry.body.safeParse(parsed).success && !holdsUnstorable(parsed)) continue;
      calls.push({
        where: 'raw',
        field: '(body)',
        vectorClass: 'raw_bodies',
        value: raw,
        url: baseUrl,
        raw,
        counts: true,
      });
    }
    targets.push(targetOf(entry, 'raw', '(body)'));
  }
  return { calls, targets };
}
