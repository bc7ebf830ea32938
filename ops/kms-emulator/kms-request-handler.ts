/**
 * Serves one KMS JSON 1.1 request, in the order AWS does things:
 *   body (≤ 1 MiB) → SigV4 check → content type → `X-Amz-Target` → counted as received → injected
 *   fault (error, drop or stall "before") → JSON body → the operation → injected fault "after"
 *   (the operation ran; the answer is held or lost) → 200 JSON or the error shape.
 * Refusals before the operation is known are counted as `refusedBeforeDispatch`; everything else per
 * operation in the request stats. An unexpected exception becomes KMSInternalException (500) and is
 * logged without the request body. Request bodies (digests, policies) are never logged.
 *
 * What it does not defend: nothing here limits who may call; that is the point of a test double bound
 * to loopback. See kms-emulator.ts.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import type { FaultInjector } from './fault-injector.js';
import type { KeyStore } from './key-store.js';
import { KmsError } from './kms-errors.js';
import { operationOfTarget } from './kms-dispatch.js';
import {
  BodyTooLargeError,
  KMS_CONTENT_TYPE,
  MAX_BODY_BYTES,
  newRequestId,
  readBody,
  sendKmsError,
  sendKmsResult,
} from './kms-wire.js';
import type { KmsRequestStats } from './request-stats.js';
import type { SigV4Check } from './sigv4-check.js';

export interface KmsRequestHandlerDeps {
  store: KeyStore;
  stats: KmsRequestStats;
  faults: FaultInjector;
  sigv4: SigV4Check;
  logger: Logger;
}

export function createKmsRequestHandler(
  deps: KmsRequestHandlerDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const { store, stats, faults, sigv4, logger } = deps;

  return async function handleKmsRequest(req, res) {
    const requestId = newRequestId();
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const refuse = (error: KmsError) => {
      stats.recordRefusedBeforeDispatch(error.code);
      sendKmsError(res, requestId, error);
    };

    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLargeError)
        return refuse(new KmsError('ValidationException', `Request body larger than ${MAX_BODY_BYTES} bytes.`, 413));
      throw err;
    }
    let operation: Operation;
    try {
      operation = await operationOf(req, body, sigv4);
    } catch (err) {
      if (err instanceof KmsError) return refuse(err);
      throw err;
    }
    const op = operation.name;
    stats.recordReceived(op);

    const fault = faults.decide(op);
    if (fault?.kind === 'error') {
      stats.recordInjected(fault.mode);
      stats.recordError(op, fault.error.code);
      return sendKmsError(res, requestId, fault.error);
    }
    if (fault?.kind === 'drop' && fault.phase === 'before') {
      stats.recordInjected('drop');
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'stall') stats.recordInjected('stall');
    if (fault?.kind === 'stall' && fault.phase === 'before') {
      const released = await faults.hold(fault.ms, gone.signal);
      if (!released) return; // the client gave up before the operation ran: it never happens
    }

    const outcome = runOperation(operation, body, { store, stats, logger }, requestId);

    if (fault?.kind === 'drop' && fault.phase === 'after') {
      stats.recordInjected('drop');
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'stall' && fault.phase === 'after') {
      if (!(await faults.hold(fault.ms, gone.signal))) return;
    }
    if (outcome.ok) sendKmsResult(res, requestId, outcome.result);
    else sendKmsError(res, requestId, outcome.error);
  };
}

type Operation = ReturnType<typeof operationOfTarget>;
type Outcome = { ok: true; result: unknown } | { ok: false; error: KmsError };

/** The checks before dispatch, in KMS's order: POST, SigV4, the content type, a known X-Amz-Target. Throws a KmsError. */
async function operationOf(req: http.IncomingMessage, body: Buffer, sigv4: SigV4Check): Promise<Operation> {
  if (req.method !== 'POST')
    throw new KmsError('UnknownOperationException', `Method ${req.method} is not supported; KMS takes POST /.`);
  await sigv4.check({ method: req.method, path: req.url ?? '/', headers: req.headers, body });
  const contentType = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (contentType !== KMS_CONTENT_TYPE)
    throw new KmsError('SerializationException', `Content-Type must be ${KMS_CONTENT_TYPE}.`);
  const target = req.headers['x-amz-target'];
  return operationOfTarget(Array.isArray(target) ? target[0] : target);
}

/** Runs the operation on a JSON object body; any failure is a KMS error (an unexpected one logged, as internal). */
function runOperation(
  operation: Operation,
  body: Buffer,
  { store, stats, logger }: Pick<KmsRequestHandlerDeps, 'store' | 'stats' | 'logger'>,
  requestId: string,
): Outcome {
  const op = operation.name;
  try {
    let input: unknown;
    try {
      input = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    } catch {
      throw new KmsError('SerializationException', 'The request body is not valid JSON.');
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new KmsError('SerializationException', 'The request body must be a JSON object.');
    const result = operation.run(input, { store, stats });
    stats.recordSucceeded(op);
    return { ok: true, result };
  } catch (err) {
    const error =
      err instanceof KmsError
        ? err
        : new KmsError('KMSInternalException', 'An internal error occurred in the KMS emulator.');
    if (!(err instanceof KmsError))
      logger.error(
        { operation: op, requestId, err: err instanceof Error ? err.message : String(err) },
        'kms emulator operation failed',
      );
    stats.recordError(op, error.code);
    return { ok: false, error };
  }
}
