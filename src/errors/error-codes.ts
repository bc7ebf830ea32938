/**
 * Every error code treasury-api answers with, its HTTP status and default user message. One list;
 * codes are stable snake_case (plus the spec's MGMT_6014) and each has a test that produces it.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_path_parameter: { status: 400, message: 'A path parameter is malformed.' },
  chain_not_supported: { status: 400, message: 'That chain is not configured on this Treasury.' },
  network_not_supported: { status: 400, message: 'That network is not configured on this Treasury or does not match the wallet.' },
  asset_not_supported: { status: 400, message: 'That asset is not the configured USDC contract of the network.' },
  scheme_not_supported: { status: 400, message: 'That payment scheme is not supported yet; use "exact".' },
  missing_eip712_domain: { status: 400, message: 'payment_requirements.extra must carry the token\'s EIP-712 name and version.' },
  sign_in_message_invalid: { status: 400, message: 'The sign-in message is not a valid SIWE / SIWS message.' },
  scope_not_found: { status: 404, message: 'No such scope for this account.' },
  pat_not_found: { status: 404, message: 'No such PAT.' },
  seller_not_found: { status: 404, message: 'No such seller.' },
  endpoint_not_found: { status: 404, message: 'No such endpoint for this seller.' },
  invalid_idempotency_key: { status: 400, message: 'Idempotency-Key must be 1 to 128 characters of [A-Za-z0-9_.:-].' },
  unauthorized: { status: 401, message: 'A bearer token is required.' },
  invalid_token: { status: 401, message: 'The bearer token is unknown, expired or revoked.' },
  master_key_removed: {
    status: 401,
    message:
      'Master keys were removed on 2026-04-27. Bootstrap a session with `xx init`, then mint PATs (`xx service pat create` for seller calls, `xx pat create` for buyer calls).',
  },
  sign_in_domain_mismatch: { status: 401, message: 'The sign-in message is for another domain or URI.' },
  sign_in_nonce_invalid: { status: 401, message: 'The sign-in nonce is unknown, expired or already used; ask for a new one.' },
  sign_in_expired: { status: 401, message: 'The sign-in message is expired or not yet valid.' },
  sign_in_signature_invalid: { status: 401, message: 'The sign-in signature does not match the address.' },
  insufficient_scope: { status: 403, message: 'This token is not allowed to do that.' },
  policy_denied: { status: 403, message: 'The wallet policy refused this payment.' },
  transfer_not_permitted_with_capability_cap: {
    status: 403,
    message: 'This wallet has capability caps, so transfers are refused. Use per_tx_cap_usd and window caps for transfer limits.',
  },
  admin_token_not_configured: { status: 403, message: 'Account minting is disabled: TREASURY_ADMIN_TOKEN is not set.' },
  not_found: { status: 404, message: 'No such route.' },
  account_not_found: { status: 404, message: 'No such Treasury account.' },
  wallet_not_found: { status: 404, message: 'No such wallet.' },
  method_not_allowed: { status: 405, message: 'That method is not allowed on this route.' },
  idempotency_key_conflict: { status: 409, message: 'This Idempotency-Key was used with a different request body.' },
  slug_taken: { status: 409, message: 'That slug is taken.' },
  endpoint_exists: { status: 409, message: 'An endpoint with that slug or method and path already exists.' },
  endpoint_has_ledger: { status: 409, message: 'This endpoint has ledger rows.' },
  ledger_conflict: { status: 409, message: 'That transaction is already in the ledger under another seller.' },
  seller_suspended: { status: 403, message: 'This seller is suspended; resume it to sell again.' },
  wallet_revoked: { status: 410, message: 'This wallet is revoked; every operation on it is refused.' },
  MGMT_6014: { status: 429, message: 'This PAT reached its daily spending cap. Raise the cap in the dashboard or wait for the UTC day to reset.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  signer_unavailable: { status: 503, message: 'The signer is unavailable; retry shortly.' },
  not_ready: { status: 503, message: 'Treasury is not ready.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
