/**
 * The KMS emulator's HTTP plumbing: reading a size-capped body, and writing answers the way AWS JSON 1.1
 * services do (`content-type: application/x-amz-json-1.1`, an `x-amzn-RequestId`) plus the header that
 * marks every answer, KMS or control, as coming from a test double: `x-treasury-kms-emulator: test-double`.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { KmsError } from './kms-errors.js';

export const EMULATOR_HEADER = 'x-treasury-kms-emulator';
export const EMULATOR_HEADER_VALUE = 'test-double';
export const KMS_CONTENT_TYPE = 'application/x-amz-json-1.1';
export const MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {}

/** Reads the whole body, at most `limit` bytes (BodyTooLargeError past it). */
export async function readBody(req: http.IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > limit) throw new BodyTooLargeError();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function send(
  res: http.ServerResponse,
  status: number,
  contentType: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    [EMULATOR_HEADER]: EMULATOR_HEADER_VALUE,
    ...extra,
  });
  res.end(body);
}

export function sendKmsResult(res: http.ServerResponse, requestId: string, result: unknown): void {
  send(res, 200, KMS_CONTENT_TYPE, JSON.stringify(result ?? {}), { 'x-amzn-requestid': requestId });
}

export function sendKmsError(res: http.ServerResponse, requestId: string, error: KmsError): void {
  send(res, error.status, KMS_CONTENT_TYPE, JSON.stringify(error.toBody()), {
    'x-amzn-requestid': requestId,
    'x-amzn-errortype': error.code,
  });
}

export function sendControlJson(res: http.ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), { 'cache-control': 'no-store' });
}

export const newRequestId = (): string => randomUUID();
