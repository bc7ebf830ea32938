/**
 * The buyer's request body, read whole and counted before anything is priced or proxied: a declared
 * Content-Length above the cap is refused unread, a chunked body is cut as soon as it passes the cap. The origin
 * then gets exactly these bytes with their Content-Length (origin-proxy.ts), whatever the method.
 *
 * Defends against: a body reaching the origin uncounted (chunked on any method; a proxy library turning a chunked
 * DELETE or OPTIONS into `Content-Length: 0` with bytes after it), an oversize body answered anything but 413,
 * unbounded memory (at most `maxBytes` per request, GATE_MAX_REQUEST_BYTES). Does not defend against: a buyer
 * trickling a body under the cap (the server's request time-out ends it).
 */
import type { IncomingMessage } from 'node:http';

export type RequestBody = { kind: 'read'; body: Buffer | undefined } | { kind: 'too_large' } | { kind: 'aborted' };

/** Does the request carry a body at all (a Content-Length or a Transfer-Encoding)? */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/** What a request that declares no body reads as: one answer for all of them (it is only ever read). */
const NO_BODY: Promise<RequestBody> = Promise.resolve(Object.freeze({ kind: 'read', body: undefined }));

/** Reads the body (undefined when the request declares none); refuses one over `maxBytes`. */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<RequestBody> {
  if (!hasBody(req)) return NO_BODY;
  const declared = req.headers['content-length'];
  if (declared !== undefined && !(Number(declared) <= maxBytes)) return Promise.resolve({ kind: 'too_large' });
  return new Promise<RequestBody>((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (outcome: RequestBody) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      if (outcome.kind === 'too_large') req.resume();
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        finish({ kind: 'too_large' }); // the rest is read and dropped until the 413 closes the connection
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ kind: 'read', body: Buffer.concat(chunks, total) }));
    req.once('error', () => finish({ kind: 'aborted' }));
    req.once('close', () =>
      finish(req.complete ? { kind: 'read', body: Buffer.concat(chunks, total) } : { kind: 'aborted' }),
    );
  });
}
