/**
 * Base64-of-JSON, the envelope of every x402 header. Standard alphabet with padding only (RFC 4648 §4),
 * UTF-8 JSON inside.
 *
 * Defends against: URL-safe (`-`, `_`) and unpadded or over-padded input (refused, like the official
 * decoders, so a header means the same thing to every implementation); non-canonical encodings whose unused
 * bits are set (refused: two spellings of one payload would defeat replay keys built on the header text);
 * whitespace and line breaks; oversize headers (refused before any decoding work); invalid UTF-8; and the
 * JSON hazards listed in safe-json.ts.
 * Does not defend against: the meaning of the JSON — schemas (wire-schemas.ts) do that.
 */
import { parseJsonSafely } from './safe-json.js';
import { X402DecodeError } from './x402-decode-error.js';

/** Upper bound on an x402 header value, in characters (= bytes: base64 is ASCII). */
export const MAX_X402_HEADER_BYTES = 16 * 1024;

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Encodes a JSON-serialisable value as standard, padded base64 of its UTF-8 JSON. */
export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Decodes standard base64 of UTF-8 JSON; throws `X402DecodeError` naming what was wrong. */
export function decodeBase64Json(value: string, maxBytes: number = MAX_X402_HEADER_BYTES): unknown {
  if (typeof value !== 'string' || value.length === 0)
    throw new X402DecodeError('header_missing', 'the header is empty');
  if (value.length > maxBytes)
    throw new X402DecodeError('header_too_large', `the header is longer than ${maxBytes} bytes`);
  const bytes = Buffer.from(value, 'base64');
  // Node re-encodes in the standard alphabet, padded and canonical: a value equal to its re-encoding is all
  // three, so the pattern is only needed to say which rule a refused value broke.
  if (bytes.toString('base64') !== value)
    throw new X402DecodeError(
      'invalid_base64',
      STANDARD_BASE64.test(value) ? 'the header is not canonical base64' : 'the header is not standard padded base64',
    );
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (err) {
    throw new X402DecodeError('invalid_utf8', 'the decoded header is not UTF-8', { cause: err });
  }
  return parseJsonSafely(text);
}
