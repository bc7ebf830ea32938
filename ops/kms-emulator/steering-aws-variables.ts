/**
 * The AWS variables a user's shell may carry that would steer the AWS SDK's default chain away from the KMS
 * emulator (a profile, a session token, a role, an endpoint). Whoever starts a signer against the emulator
 * (the sandbox, the test harness) keeps them from the signer's environment, so it never reaches a real
 * account. It does not cover the static keys: those are set to the emulator's own.
 */
export const AWS_VARIABLES_STEERING_AWAY_FROM_THE_EMULATOR = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_SESSION_TOKEN',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_KMS',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  'AWS_ROLE_ARN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
] as const;
