/**
 * What the hostile-input suites (test/integration/api/hostile-inputs*.test.ts) share: the table of
 * test/vectors/hostile-inputs.json and lists drawn from it, the check that a request was refused (a 4xx with a
 * stable error code from src/shared/error-codes.ts), and a snapshot of every row of every table, so "nothing was
 * written" is checked whole. Defends the suites against a refusal that is really a 5xx, an unstable code, or a
 * write to a table the suite did not think to count.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../src/shared/error-codes.js';
import type { TestTreasury } from './api-harness.js';

export const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

/** Text every stored string must refuse; a formula-looking value is well-formed text, stored as given. */
export const FREE_TEXT = (hostile.free_text as string[]).filter((v) => !v.startsWith('='));
/** Raw amounts a bigint column holds but above the largest any field takes (10^15 raw units, 10^9 USD). */
export const RAW_ABOVE_BOUND = ['1000000000000001', '9223372036854775807'];

/** The table's one well-formed address: a schema takes it (as a payer, in an allowlist). */
export const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;

export const isEmptyObject = (v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0;

/** The table's hostile identifiers, encoded for a path segment. */
export const hostileIds = () => (hostile.identifier as string[]).map(encodeURIComponent);

/** A query-string value: the table's strings as they are, other values as their JSON; a lone surrogate as WTF-8. */
export function asQuery(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.isWellFormed() ? encodeURIComponent(text) : '%ED%A0%80';
}

/**
 * Query strings whose keys are the names a plain object inherits: each must be read as a key like any other, and
 * a strict query schema refuses it as unknown — never swallowed by the `__proto__` setter (the query read as if
 * the key were absent), nor answered from the prototype (a whole query string `constructor` read as a function).
 */
export const INHERITED_NAME_QUERIES = [
  '__proto__=1',
  '__proto__',
  '__proto__=a&__proto__=b',
  'constructor',
  'toString',
  'hasOwnProperty=1',
  'valueOf',
];

/** What a malformed Idempotency-Key header is refused with. */
export const INVALID_KEY = 'invalid_idempotency_key';
/** An Idempotency-Key (1–128 of [A-Za-z0-9_.:-]); src/api/http/schemas/common-schemas.ts. */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Hostile header values, as a client sends their UTF-8 bytes (fetch takes a header value as Latin-1): the table's
 * text, bearers and base64, and a few a key must not be. Left out: values with a control character (no HTTP client
 * sends one; the server's parser refuses it before the app), white space alone (an empty header, which is no
 * header) and valid keys.
 */
export function hostileHeaderValues(): string[] {
  const strings = [
    ...hostile.any!,
    ...hostile.identifier!,
    ...hostile.bearer!,
    ...hostile.base64_header!,
    ...FREE_TEXT,
    'k'.repeat(129),
    'key with space',
    'café',
    'ключ',
    'a/b',
    'a=b',
    'a+b',
  ].filter((v): v is string => typeof v === 'string');
  return strings
    .map((v) => Buffer.from(v, 'utf8').toString('latin1'))
    .filter((v) => !/[^\t\x20-\x7e\x80-\xff]/.test(v) && v.trim() !== '' && !IDEMPOTENCY_KEY.test(v.trim()));
}

/** A header value the server refuses before the app reads it, with no JSON body: over its 16 KiB header bound. */
const refusedByTransport = (status: number, value: string) => status === 431 && value.length > 16 * 1024;

export interface RefusedOptions {
  token?: string;
  body?: unknown;
  /** A whole request body, sent as it is. */
  raw?: string;
  headers?: Record<string, string>;
  /** The one error code the refusal must carry, when the suite knows it. */
  code?: string;
}

/**
 * The check each suite calls: the request answers 4xx with a stable error code and a user message (or, for a
 * hostile header value, the HTTP server's own refusal above).
 */
export function refusedBy(t: Pick<TestTreasury, 'request'>) {
  return async (method: string, route: string, opts: RefusedOptions = {}) => {
    const res = await t.request(method, route, {
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      ...(opts.raw !== undefined ? { rawBody: opts.raw } : opts.body !== undefined ? { body: opts.body } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
    const sent = opts.raw ?? JSON.stringify(opts.body) ?? '';
    const label = `${method} ${route.slice(0, 120)} ${JSON.stringify(opts.headers ?? {}).slice(0, 80)} ${sent.slice(0, 600)}`;
    if (Object.values(opts.headers ?? {}).some((v) => refusedByTransport(res.status, v))) return res;
    assert.ok(
      res.status >= 400 && res.status < 500,
      `${label} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
    );
    assert.ok(
      typeof res.body?.error_code === 'string' && res.body.error_code in ERROR_CODES,
      `${label} → no stable error_code: ${JSON.stringify(res.body).slice(0, 200)}`,
    );
    assert.equal(typeof res.body.user_message, 'string', label);
    if (opts.code) assert.equal(res.body.error_code, opts.code, label);
    return res;
  };
}

/**
 * Refusal checks queued and run a few at a time (the table times every field is a thousand requests and more);
 * each still fails with its own message. Nothing else may write meanwhile, so the order does not matter.
 */
export function queueOf(refused: ReturnType<typeof refusedBy>, width = 6) {
  const pending: Array<() => Promise<unknown>> = [];
  return {
    add: (...args: Parameters<typeof refused>) => void pending.push(() => refused(...args)),
    async run(): Promise<void> {
      const calls = pending.splice(0);
      let next = 0;
      let failure: { error: unknown } | undefined;
      // The first failure stops every worker (none runs on into the next test) and is thrown.
      await Promise.all(
        Array.from({ length: width }, async () => {
          while (next < calls.length && !failure)
            await calls[next++]!().catch((error: unknown) => void (failure ??= { error }));
        }),
      );
      if (failure) throw failure.error;
    },
  };
}

/**
 * Every row of every table of the database, each row as its JSON, sorted, to compare before and after; but the
 * rate limiter's counters, which every request moves, refused or not (that is what they count).
 */
export function snapshotOf(t: Pick<TestTreasury, 'db'>) {
  return async (): Promise<Record<string, string[]>> => {
    const { rows } = await t.db.knex.raw<{ rows: Array<{ tablename: string }> }>(
      "select tablename from pg_tables where schemaname = 'public' order by tablename",
    );
    const out: Record<string, string[]> = {};
    for (const { tablename } of rows.filter((r) => r.tablename !== 'rate_limits'))
      out[tablename] = (await t.db.knex(tablename).select('*')).map((r) => JSON.stringify(r)).sort();
    return out;
  };
}
