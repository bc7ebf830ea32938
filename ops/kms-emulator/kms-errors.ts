/**
 * The KMS emulator's error shapes: one `KmsError` carrying the AWS error code (`__type`), the HTTP status
 * and the message, written on the wire exactly as AWS JSON 1.1 services do:
 * `{"__type": "NotFoundException", "message": "..."}` with `content-type: application/x-amz-json-1.1`.
 *
 * Statuses follow what the real service was seen to send, not the SDK model: 400 for every client-side
 * error (NotFound, Disabled, KMSInvalidState, Validation, Throttling, the SigV4 refusals...), 500 for
 * KMSInternalException and KeyUnavailableException, 503 for DependencyTimeoutException, 412 for
 * DryRunOperationException (as modelled). The SDK picks the exception from `__type`, never from the
 * status; the status only decides `$fault` and whether the SDK's retry strategy treats it as transient.
 * AccessDeniedException uses a capital-M `Message`, as AWS's IAM layer does.
 *
 * This is a TEST DOUBLE's vocabulary: it does not defend anything by itself.
 */

export type KmsErrorCode =
  | 'AccessDeniedException'
  | 'AlreadyExistsException'
  | 'DependencyTimeoutException'
  | 'DisabledException'
  | 'DryRunOperationException'
  | 'IncompleteSignatureException'
  | 'InvalidAliasNameException'
  | 'InvalidArnException'
  | 'InvalidKeyUsageException'
  | 'InvalidMarkerException'
  | 'InvalidSignatureException'
  | 'KMSInternalException'
  | 'KMSInvalidSignatureException'
  | 'KMSInvalidStateException'
  | 'KeyUnavailableException'
  | 'LimitExceededException'
  | 'MalformedPolicyDocumentException'
  | 'MissingAuthenticationTokenException'
  | 'NotFoundException'
  | 'SerializationException'
  | 'TagException'
  | 'ThrottlingException'
  | 'UnknownOperationException'
  | 'UnrecognizedClientException'
  | 'UnsupportedOperationException'
  | 'ValidationException';

const SERVER_ERROR_STATUS: Partial<Record<KmsErrorCode, number>> = {
  KMSInternalException: 500,
  KeyUnavailableException: 500,
  DependencyTimeoutException: 503,
  DryRunOperationException: 412,
};

/** The HTTP status the emulator sends with `code` (400 unless the code is a server-side one). */
export function statusOfKmsError(code: KmsErrorCode): number {
  return SERVER_ERROR_STATUS[code] ?? 400;
}

export class KmsError extends Error {
  readonly status: number;

  constructor(
    readonly code: KmsErrorCode,
    message: string,
    status?: number,
  ) {
    super(message);
    this.name = code;
    this.status = status ?? statusOfKmsError(code);
  }

  /** The JSON body AWS sends for this error. */
  toBody(): Record<string, string> {
    return this.code === 'AccessDeniedException'
      ? { __type: this.code, Message: this.message }
      : { __type: this.code, message: this.message };
  }
}

export const THROTTLING_MESSAGE =
  'You have exceeded the rate at which you may call KMS. Reduce the frequency of your calls.';

export const kmsErrors = {
  notFound: (what: string) => new KmsError('NotFoundException', `${what} is not found.`),
  disabled: (arn: string) => new KmsError('DisabledException', `${arn} is disabled.`),
  pendingDeletion: (arn: string) => new KmsError('KMSInvalidStateException', `${arn} is pending deletion.`),
  validation: (message: string) => new KmsError('ValidationException', message),
  throttling: () => new KmsError('ThrottlingException', THROTTLING_MESSAGE),
  internal: () => new KmsError('KMSInternalException', 'An internal error occurred (injected by the KMS emulator).'),
  dependencyTimeout: () =>
    new KmsError('DependencyTimeoutException', 'The service timed out (injected by the KMS emulator).'),
  accessDenied: (operation: string) =>
    new KmsError(
      'AccessDeniedException',
      `User is not authorized to perform: kms:${operation} (injected by the KMS emulator)`,
    ),
};
