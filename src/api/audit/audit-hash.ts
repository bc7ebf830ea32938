/**
 * An audit row's hash: SHA-256 over its previous row's hash, a newline, and the canonical JSON
 * (base/canonical-json.ts: keys sorted, no whitespace) of `{ actor, chain_key, created_at, event_type,
 * payload, seq }`. The text is built once per row, the payload's canonical JSON first: it is both part of what
 * the hash covers and the text the row stores, so a row is serialised once, not three times (sorted copies of
 * the payload and of the row, then the payload again for its column).
 *
 * Defends: one spelling of a row, whoever computes its hash — the pay path writing it, the verifier reading it
 * back from jsonb (./audit-ledger.ts, ./verify-audit-since.ts); every row's text equals
 * `canonicalJson(row)` (test/unit/audit/audit-hash.test.ts holds the two against each other). A payload that
 * canonical JSON would now spell differently from every earlier row is refused at write, not hashed another
 * way: a `__proto__` key at any depth (earlier rows' hashes left it out; AuditPayloadError) and a number JSON
 * cannot spell (earlier rows' hashes wrote null; CanonicalJsonError). The service writes neither.
 * Does not defend: anything about who wrote the row; see ./audit-ledger.ts for what the chain does and does not
 * detect.
 */
import { hash } from 'node:crypto';
import { BaseError } from '../../../base/base-error.js';
import { canonicalJson, CanonicalJsonError } from '../../../base/canonical-json.js';

/** The fields of an audit row its hash covers, the payload as its canonical JSON text (canonicalPayloadText). */
export interface AuditHashInput {
  chain_key: string;
  seq: number;
  event_type: string;
  actor: string;
  payloadText: string;
  prev_hash: string;
  created_at: Date;
}

/**
 * `payload` as canonical JSON, the same text as `canonicalJson(payload)`: a plain object's keys sorted, its
 * strings, numbers, booleans and nulls written directly, anything nested through canonicalJson. Throws a
 * CanonicalJsonError for a number JSON cannot spell, as canonicalJson does.
 */
export function canonicalPayloadText(payload: Record<string, unknown>): string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload) || !isPlain(payload))
    return canonicalJson(payload);
  let out = '{';
  for (const key of Object.keys(payload).sort()) {
    const value = payload[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (typeof value === 'number' && !Number.isFinite(value)) throw new CanonicalJsonError([key], value);
    const text =
      value === null || typeof value !== 'object'
        ? JSON.stringify(value)
        : (nestedText(key, value) as string | undefined);
    if (text === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + text;
  }
  return out + '}';
}

/** canonicalJson of the payload's `value` at `key`; a refusal names its path from the payload. */
function nestedText(key: string, value: object): string {
  try {
    return canonicalJson(value);
  } catch (err) {
    if (!(err instanceof CanonicalJsonError)) throw err;
    throw new CanonicalJsonError([key, ...err.details.path], Number(err.details.value));
  }
}

/** A payload the ledger will not write: its hash would be spelled otherwise than every earlier row's. */
export class AuditPayloadError extends BaseError<'audit_payload_refused', { reason: 'proto_key' }> {
  override name = 'AuditPayloadError';

  constructor() {
    super('audit_payload_refused', {
      message: 'an audit payload may not hold a "__proto__" key',
      details: { reason: 'proto_key' },
    });
  }
}

/**
 * A `__proto__` key at any depth of a canonical JSON text. Outside strings a key begins right after `{` or `,`
 * (no whitespace), and inside a string every `"` is escaped, so nothing else matches.
 */
const PROTO_KEY = /[{,]"__proto__":/;

/**
 * The text a new row stores and hashes: canonicalPayloadText, refused (AuditPayloadError) when it holds a
 * `__proto__` key, which earlier rows' hashes never covered.
 */
export function writablePayloadText(payload: Record<string, unknown>): string {
  const text = canonicalPayloadText(payload);
  if (PROTO_KEY.test(text)) throw new AuditPayloadError();
  return text;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The hex SHA-256 of `prev_hash`, a newline and the row's canonical JSON (its keys in sorted order). */
export function auditHash(row: AuditHashInput): string {
  const body =
    `{"actor":${JSON.stringify(row.actor)},"chain_key":${JSON.stringify(row.chain_key)}` +
    `,"created_at":${JSON.stringify(row.created_at.toISOString())},"event_type":${JSON.stringify(row.event_type)}` +
    `,"payload":${row.payloadText},"seq":${JSON.stringify(row.seq)}}`;
  return hash('sha256', `${row.prev_hash}\n${body}`, 'hex');
}
