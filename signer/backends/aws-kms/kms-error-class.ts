/**
 * What a failed KMS call means for the caller, decided once here from the SDK's error (its `name`, the
 * HTTP status in `$metadata`, Node's socket `code`): whether to retry, and whether the request may have
 * been carried out although it failed (a 5xx or a timeout after the request left), which decides whether
 * a non-idempotent call (CreateKey) may be sent again.
 *
 * Protects against: retrying what can never succeed (access denied, a disabled key), hammering a
 * throttled quota without backoff, and treating a maybe-executed CreateKey as not executed. Codes that
 * the KMS model does not define (ThrottlingException, AccessDeniedException, ValidationException) come as
 * a plain KMSServiceException with `name` set, so names are matched, never `instanceof`.
 * Known limits: an error this file does not know is not retried (and counted as `unknown`); a 5xx with
 * an unknown name is treated as a server error.
 */

export type KmsFailureReason =
  | 'throttled'
  | 'server_error'
  | 'timeout'
  | 'connection_lost'
  | 'unreachable'
  | 'not_found'
  | 'disabled'
  | 'invalid_state'
  | 'already_exists'
  | 'access_denied'
  | 'quota'
  | 'invalid_request'
  | 'unknown';

export interface KmsErrorClass {
  reason: KmsFailureReason;
  /** Worth sending again (within the deadline). */
  retryable: boolean;
  /** KMS may have carried the request out although the call failed (the request left; no clean refusal came back). */
  maybeExecuted: boolean;
}

const THROTTLE_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'SlowDown',
]);
const SERVER_NAMES = new Set([
  'KMSInternalException',
  'KeyUnavailableException',
  'DependencyTimeoutException',
  'InternalFailure',
  'ServiceUnavailable',
]);
const AUTH_NAMES = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'CredentialsProviderError',
]);
const INVALID_NAMES = new Set([
  'ValidationException',
  'InvalidKeyUsageException',
  'InvalidArnException',
  'KMSInvalidSignatureException',
  'TagException',
  'UnsupportedOperationException',
  'InvalidAliasNameException',
  'MalformedPolicyDocumentException',
]);
/** Node socket codes of a request that never reached a server. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);
/** Node socket codes of a connection that broke once the request may have left. */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE']);

interface SdkLikeError {
  name?: unknown;
  code?: unknown;
  errors?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $response?: { statusCode?: unknown };
  $fault?: unknown;
}

function socketCode(e: SdkLikeError): string | undefined {
  if (typeof e.code === 'string') return e.code;
  // Node 20 reports a failed dual-stack connect as an AggregateError whose parts carry the codes.
  if (Array.isArray(e.errors))
    for (const part of e.errors)
      if (part && typeof (part as SdkLikeError).code === 'string') return (part as SdkLikeError).code as string;
  return undefined;
}

function httpStatus(e: SdkLikeError): number | undefined {
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

export function classifyKmsError(err: unknown): KmsErrorClass {
  const e = (err ?? {}) as SdkLikeError;
  const name = typeof e.name === 'string' ? e.name : '';
  const status = httpStatus(e);
  const code = socketCode(e);
  const cls = (reason: KmsFailureReason, retryable: boolean, maybeExecuted: boolean): KmsErrorClass => ({
    reason,
    retryable,
    maybeExecuted,
  });

  // A throttled request was refused before it was carried out: always safe to send again, later.
  if (THROTTLE_NAMES.has(name) || status === 429) return cls('throttled', true, false);
  if (name === 'NotFoundException') return cls('not_found', false, false);
  if (name === 'DisabledException') return cls('disabled', false, false);
  if (name === 'KMSInvalidStateException') return cls('invalid_state', false, false);
  if (name === 'AlreadyExistsException') return cls('already_exists', false, false);
  // KMS's LimitExceededException is a resource quota (too many keys or aliases), not a rate: waiting does not help.
  if (name === 'LimitExceededException') return cls('quota', false, false);
  if (AUTH_NAMES.has(name)) return cls('access_denied', false, false);
  if (INVALID_NAMES.has(name)) return cls('invalid_request', false, false);
  if (SERVER_NAMES.has(name) || (status !== undefined && status >= 500) || e.$fault === 'server')
    return cls('server_error', true, true);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return cls('unreachable', false, false);
  if (code !== undefined && LOST_CODES.has(code)) return cls('connection_lost', true, true);
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'ETIMEDOUT') return cls('timeout', true, true);
  return cls('unknown', false, status === undefined);
}
