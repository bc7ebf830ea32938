/**
 * `readCappedText`: a seller's answer read as text (UTF-8, as `Response.text()` reads it), at most `maxBytes`
 * of its body. A `content-length` above the cap (on a body sent without a content-encoding, so the length is
 * the body's) fails before anything is read; otherwise the body is read chunk by chunk and, at the first chunk
 * past the cap, the stream is cancelled (the connection goes with it) and `ResponseTooLargeError` is raised.
 *
 * Defends against: a seller, or anything between it and the buyer, streaming an endless or huge body into the
 * buyer's memory through whatever fetch the buyer was given (the global fetch included).
 * Does not defend against: a seller that sends slowly (the caller's `signal` bounds the time); the caps
 * themselves, which are the caller's (createX402Buyer's `maxChallengeBytes` and `maxResponseBytes`).
 */
import { ResponseTooLargeError } from './sdk-errors.js';

/** The body of `response` as text, or `ResponseTooLargeError` past `maxBytes` (`paymentSent`: it answered a payment). */
export async function readCappedText(response: Response, maxBytes: number, paymentSent: boolean): Promise<string> {
  const tooLarge = () => new ResponseTooLargeError(response.status, maxBytes, paymentSent);
  const body = response.body;
  if (body === null) return '';
  const encoding = response.headers.get('content-encoding');
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if ((encoding === null || encoding.trim().toLowerCase() === 'identity') && declared > maxBytes) {
    await body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.byteLength;
      if (read > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      parts.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
  parts.push(decoder.decode());
  return parts.join('');
}
