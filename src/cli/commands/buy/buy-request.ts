/**
 * The request `xx buy` sends, from its arguments: `--body` (inline JSON or `@file`) and `--header name:value`.
 *
 * Defends: a header argument standing in for the payment or the credentials (authorization and the x402
 * payment headers are the buyer's to set, never the command line's), and a body that is not JSON reaching a seller.
 */
import fs from 'node:fs';
import { badArgument } from '../seller/seller-kit.js';

/** `--body`'s text: inline JSON, or the JSON in `@file`; invalid_argument otherwise. */
export function readBody(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = fs.readFileSync(raw.slice(1), 'utf8');
    } catch {
      throw badArgument('--body', `cannot read ${raw.slice(1)}`);
    }
  }
  try {
    JSON.parse(text);
  } catch {
    throw badArgument('--body', 'expected JSON (inline or @file)');
  }
  return text;
}

/** `--header` entries as lower-case names and trimmed values; invalid_argument for a malformed or reserved one. */
export function parseHeaders(entries: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries ?? []) {
    const at = e.indexOf(':');
    if (at <= 0) throw badArgument('--header', `expected name:value, got "${e}"`);
    const name = e.slice(0, at).trim().toLowerCase();
    if (!/^[a-z0-9-]+$/.test(name) || ['authorization', 'payment-signature', 'x-payment'].includes(name))
      throw badArgument('--header', `"${name}" cannot be set`);
    out[name] = e.slice(at + 1).trim();
  }
  return out;
}
