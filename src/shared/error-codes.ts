/**
 * Every error code treasury-api answers with, its HTTP status and default user message. One list;
 * codes are stable snake_case (plus the spec's MGMT_6014) and each has a test that produces it —
 * test/unit/architecture/error-code-tests.test.ts fails when a code is named by no test, or when a code of
 * RETIRED_ERROR_CODES (kept for clients that know it, produced no more) is produced again. The gate's and the
 * public catalogue's codes are kept in ./error-codes-gate.ts and spread in here.
 */
import { GATE_AND_DISCOVERY_ERROR_CODES } from './error-codes-gate.js';

export const ERROR_CODES = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  unstorable_value: {
    status: 400,
    message:
      'A value in the request cannot be stored (a number too large for its column, or text the database cannot hold); nothing was recorded.',
  },
  invalid_payment_header: {
    status: 400,
    message: 'The payment header is not valid standard base64 of a JSON x402 payment.',
  },
  invalid_authorization_terms: { status: 400, message: 'The proposed authorization window or nonce cannot be signed.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  body_too_complex: {
    status: 400,
    message:
      'The request body nests too deep or holds too many object keys (see limit and max); nothing was read from it.',
  },
  invalid_path_parameter: { status: 400, message: 'A path parameter is malformed.' },
  chain_not_supported: { status: 400, message: 'That chain is not configured on this Treasury.' },
  network_not_supported: {
    status: 400,
    message: 'That network is not configured on this Treasury or does not match the wallet.',
  },
  asset_not_supported: { status: 400, message: 'That asset is not the configured USDC contract of the network.' },
  scheme_not_supported: { status: 400, message: 'That payment scheme is not supported; use "exact" or "upto".' },
  upto_requirements_invalid: {
    status: 400,
    message:
      'An "upto" payment_requirements.extra must carry facilitatorAddress, and assetTransferMethod may only be "permit2".',
  },
  wallet_key_rotated: {
    status: 409,
    message: "The wallet's key was rotated while this payment was prepared; nothing was signed. Send it again.",
  },
  svm_requirements_invalid: {
    status: 400,
    message:
      'A Solana "exact" payment_requirements must name a payTo and an extra.feePayer other than the paying wallet; see problems.',
  },
  transfer_not_supported: {
    status: 400,
    message: 'Transfers are not supported from a wallet on this network yet; pay an x402 challenge with POST …/pay.',
  },
  permit2_allowance_required: {
    status: 412,
    message:
      'The wallet has not approved Permit2 to move enough of this token; an "upto" payment needs that one-time on-chain allowance.',
  },
  missing_eip712_domain: {
    status: 400,
    message: "payment_requirements.extra must carry the token's EIP-712 name and version.",
  },
  sign_in_chain_not_supported: {
    status: 400,
    message: 'The sign-in message names a chain this Treasury does not serve.',
  },
  sign_in_message_invalid: { status: 400, message: 'The sign-in message is not a valid SIWE / SIWS message.' },
  scope_not_found: { status: 404, message: 'No such scope for this account.' },
  pat_not_found: { status: 404, message: 'No such PAT.' },
  well_known_not_found: {
    status: 404,
    message: 'The verification file is absent at /.well-known/xx-verification.txt on the origin.',
  },
  openapi_not_found: { status: 404, message: 'The OpenAPI document was not found at openapi_url.' },
  openapi_invalid: { status: 422, message: 'The OpenAPI document is not valid JSON with a paths object.' },
  openapi_url_not_configured: { status: 409, message: 'Set openapi_url on the seller first.' },
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
  sign_in_nonce_invalid: {
    status: 401,
    message: 'The sign-in nonce is unknown, expired or already used; ask for a new one.',
  },
  sign_in_expired: { status: 401, message: 'The sign-in message is expired or not yet valid.' },
  sign_in_signature_invalid: { status: 401, message: 'The sign-in signature does not match the address.' },
  insufficient_scope: { status: 403, message: 'This token is not allowed to do that.' },
  lineage_exceeds_parent: {
    status: 403,
    message:
      'A credential cannot reach further than the credential it is made with: the same scope, no later expiry, no higher daily cap (see `refused`).',
  },
  fresh_sign_in_required: {
    status: 403,
    message:
      'This session was exchanged from an agent PAT and acts as that agent only. PATs, caps, agents, sessions, sellers and their ledger need the owner to sign in again (SIWE / SIWS), e.g. with the xx CLI.',
  },
  policy_denied: { status: 403, message: 'The wallet policy refused this payment.' },
  challenge_origin_not_seller: {
    status: 403,
    message: "The payee is a Treasury seller's, which does not sell at the origin that asked; nothing was signed.",
  },
  // Owner-signed policies (docs/adr/0012-owner-signed-policies.md): what the signer says of a signed policy.
  policy_signature_invalid: {
    status: 403,
    message:
      "The policy document is not signed by the wallet's policy authority (or its signature does not verify, or it is dated ahead); sign it with the authority's key (see rule).",
  },
  policy_version_stale: {
    status: 409,
    message:
      'The signed policy is not the next version of the one the signer holds (current_version); sign it again as current_version + 1.',
  },
  policy_signature_required: {
    status: 409,
    message:
      "This wallet's policy is owner-signed: an unsigned policy cannot replace it. Sign the policy (version next_version) and PUT it to /v1/wallets/{id}/policy/signed.",
  },
  policy_receipt_unavailable: {
    status: 409,
    message:
      'The signer gives no policy receipt for this wallet (see rule): a Solana wallet (key_curve), a wallet whose key it does not know it holds (unknown_wallet) or a wallet without a key (no_wallet_key).',
  },
  key_destruction_not_allowed: {
    status: 409,
    message:
      "This wallet's owner-signed policy does not allow its key to be destroyed (a rotation or a revocation destroys it): the owner signs a policy with allow_key_destruction: true (version next_version) and PUTs it to /v1/wallets/{id}/policy/signed first.",
  },
  transfer_not_permitted_with_capability_cap: {
    status: 403,
    message:
      'This wallet has capability caps, so transfers are refused. Use per_tx_cap_usd and window caps for transfer limits.',
  },
  admin_token_not_configured: { status: 403, message: 'Account minting is disabled: TREASURY_ADMIN_TOKEN is not set.' },
  not_found: { status: 404, message: 'No such route.' },
  dashboard_not_built: {
    status: 503,
    message: 'The dashboard is not built on this server; run `npm run build:dashboard` (npm start does it).',
  },
  account_not_found: { status: 404, message: 'No such Treasury account.' },
  api_key_not_found: { status: 404, message: 'This Treasury account has no legacy api key.' },
  agent_not_found: { status: 404, message: 'No such agent.' },
  wallet_not_found: { status: 404, message: 'No such wallet.' },
  method_not_allowed: { status: 405, message: 'That method is not allowed on this route.' },
  authorization_not_found: { status: 404, message: 'No such authorization for this wallet.' },
  settlement_not_applicable: {
    status: 422,
    message: 'Only a signed authorization has a settlement to record.',
  },
  settlement_not_verified: {
    status: 422,
    message: 'The transaction is not a verified settlement of this authorization; see reason.',
  },
  settlement_unconfirmed: {
    status: 409,
    message:
      'The settlement is mined but not yet as deep as this network requires; report it again later (see confirmations and required_confirmations).',
  },
  settlement_already_recorded: {
    status: 409,
    message: "Another transaction is already recorded as this authorization's settlement.",
  },
  identity_already_linked: {
    status: 409,
    message:
      'This sign-in identity (a Solana or EVM address) belongs to another account; an identity is linked to one account only.',
  },
  wallet_limit_reached: {
    status: 409,
    message:
      'No more active wallets here: the agent or the account holds as many as this Treasury allows (see scope and limit). Revoke one, or ask the operator to raise the limit.',
  },
  nonce_already_used: { status: 409, message: 'This EIP-3009 nonce was already used by this wallet; propose another.' },
  idempotency_key_conflict: { status: 409, message: 'This Idempotency-Key was used with a different request body.' },
  payment_identifier_mismatch: {
    status: 400,
    message: 'The Idempotency-Key header and payment_identifier differ; send one, or both the same.',
  },
  origin_not_configured: { status: 409, message: 'Set the seller origin first (PATCH /v1/sellers/{id} with origin).' },
  verification_token_mismatch: { status: 409, message: "The verification file does not contain this seller's token." },
  payouts_not_applicable: {
    status: 409,
    message: 'Direct payout mode pays sellers on-chain; there is nothing to flush.',
  },
  payout_in_progress: {
    status: 409,
    message:
      "Another flush of this seller's payouts is recording or moving them (a settlement can take seconds); this one waited for nothing, and whatever it recorded is moved by the next flush. Retry after retry_after_seconds.",
  },
  seller_refresh_in_progress: { status: 409, message: "This seller's endpoints are being changed; retry later." },
  banking_not_declared: { status: 409, message: 'Declare a legal entity and country first.' },
  slug_taken: { status: 409, message: 'That slug is taken.' },
  endpoint_exists: { status: 409, message: 'An endpoint with that slug or method and path already exists.' },
  endpoint_has_ledger: { status: 409, message: 'This endpoint has ledger rows.' },
  seller_limit_reached: {
    status: 409,
    message:
      'This account holds as many sellers as an account may (max_sellers); a seller is never deleted, so reuse or rename one, or ask the operator to raise the limit. Nothing was added.',
  },
  endpoint_limit_reached: {
    status: 409,
    message:
      'This seller holds as many endpoints as a seller may (max_endpoints); delete or merge endpoints (one path pattern serves many routes) before adding more. Nothing was added.',
  },
  pat_limit_reached: {
    status: 409,
    message:
      'This account holds as many live PATs as an account may (limit); revoke one it no longer needs, or ask the operator to raise the limit. Nothing was issued.',
  },
  agent_limit_reached: {
    status: 409,
    message:
      'This account holds as many agents as an account may (limit); give new work to an agent it already has, or ask the operator to raise the limit. Nothing was made.',
  },
  ledger_pending_limit: {
    status: 429,
    message:
      'This seller, or its account over all its sellers (see scope), has as many ledger rows waiting for on-chain verification as it may (max_pending_rows); nothing in this report was stored. Retry after retry_after_seconds, once rows are verified or rejected.',
  },
  ledger_rejected_budget_exhausted: {
    status: 429,
    message:
      'This seller reported, in the last window_seconds, as many transactions that ended rejected as a seller may (limit); nothing in this report was stored. Retry after retry_after_seconds, as those rows age out of the window.',
  },
  payment_id_limit_reached: {
    status: 429,
    message:
      'This seller keeps as many payment-identifier ids, or bytes of stored answers, as a seller may (see scope and limit); nothing was stored. Ids and answers expire (answers after 24 hours): retry after retry_after_seconds.',
  },
  pay_to_signature_invalid: {
    status: 422,
    message: "The signature is not the pay-to address's signature of the claim message for this seller.",
  },
  uptime_hour_out_of_window: {
    status: 422,
    message:
      'An uptime bucket names an hour outside the last 48 hours (or more than 5 minutes ahead); it was not stored. Check the gate clock.',
  },
  ledger_conflict: { status: 409, message: 'That transaction is already in the ledger under another seller.' },
  seller_suspended: { status: 403, message: 'This seller is suspended; resume it to sell again.' },
  wallet_revoked: { status: 410, message: 'This wallet is revoked; every operation on it is refused.' },
  cross_site_request: {
    status: 403,
    message:
      "A browser sent this request for a page of another site; Treasury's sign-in and catalogue routes answer only their own pages and non-browser clients.",
  },
  rate_limited: {
    status: 429,
    message: 'Too many requests from this address, token or account; retry after retry_after_seconds.',
  },
  pay_concurrency_exceeded: {
    status: 429,
    message:
      'This account has as many payments at work and waiting in this Treasury process as it may (see in_flight_max and queue_max); nothing was decided. Retry after retry_after_seconds, or pay fewer at once.',
  },
  signer_calls_exceeded: {
    status: 429,
    message:
      'This account has as many calls waiting for the signer in this Treasury process as it may (wallet keys, policy reads and writes, receipts; see in_flight_max and queue_max); nothing was done. Retry after retry_after_seconds.',
  },
  chain_reads_exceeded: {
    status: 429,
    message:
      "This account has as many reads of the chain's RPC at work and waiting in this Treasury process as it may (balances, settlement transactions; see in_flight_max and queue_max); nothing was read. Retry after retry_after_seconds.",
  },
  MGMT_6014: {
    status: 429,
    message:
      'This PAT reached its daily spending cap. The owner raises the cap in the dashboard or with `xx pat update` (both sign in again), or wait for the UTC day to reset.',
  },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  origin_unreachable: { status: 502, message: 'The origin could not be reached.' },
  origin_redirect_refused: {
    status: 422,
    message: 'The origin redirected; serve the verification file without a redirect.',
  },
  origin_not_public: {
    status: 422,
    message:
      'The origin resolves to a address that is not globally reachable (private, loopback, link-local, NAT64, reserved, …).',
  },
  origin_port_refused: {
    status: 422,
    message: 'The origin names a port outbound requests may not use (80 and 443 unless the operator allows more).',
  },
  origin_response_too_large: { status: 422, message: 'The document on the origin is larger than the limit.' },
  facilitator_not_configured: { status: 503, message: 'This seller has no x402 facilitator configured; retry later.' },
  wallet_has_balance: {
    status: 409,
    message:
      "The wallet's address holds USDC, which its key's destruction would lose for good: move it first (transfer), or pass abandon_balance: true.",
  },
  balance_unknown: {
    status: 409,
    message:
      "The wallet's balance cannot be read, and its key's destruction would lose whatever it holds: move the funds, then pass abandon_balance: true.",
  },
  chain_unavailable: {
    status: 503,
    message: 'The chain RPC is unreachable and no earlier figure is known; retry shortly.',
  },
  signer_refused: {
    status: 403,
    message:
      "The signer refused this payment: it is outside the signer's own limits (chains, tokens, amount, validity window). Nothing was signed.",
  },
  signer_limit_exceeded: {
    status: 429,
    message:
      "The signer refused this signature: the wallet is past one of the signer's own rolling ceilings (amount, signatures or policy receipts per window; see limit). Nothing was signed; retry after retry_after_seconds.",
  },
  signer_unavailable: { status: 503, message: 'The signer is unavailable; retry shortly.' },
  signer_overloaded: {
    status: 503,
    message:
      'Treasury has more calls waiting for its signer than it keeps, or this one waited too long for its turn; nothing was done. Retry shortly.',
  },
  chain_busy: {
    status: 503,
    message:
      "Treasury has more reads of the chain's RPC waiting than it keeps, or this one waited too long for its turn; nothing was read. Retry shortly.",
  },
  pay_overloaded: {
    status: 503,
    message:
      'Treasury has more payments waiting than it keeps, or this one waited too long for its turn; nothing was decided. Retry shortly.',
  },
  request_abandoned: {
    status: 408,
    message: 'The client closed the connection while its payment waited for its turn; nothing was decided.',
  },
  hsm_unsupported: {
    status: 500,
    message:
      "The signer's HSM cannot perform an operation this request needs (a mechanism or key type it does not offer). Retrying will not help: the operator must give the signer an HSM that qualifies (docs/deploy-hsm.md). Nothing was signed.",
  },
  database_unavailable: { status: 503, message: 'The database is unreachable or restarting; retry shortly.' },
  database_busy: {
    status: 503,
    message:
      'The database did not answer in time (a lock held too long, or a slow statement); nothing was written. Retry shortly.',
  },
  not_ready: { status: 503, message: 'Treasury is not ready.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  settlement_override_invalid: {
    status: 500,
    message: 'The seller named an invalid charge for this upto payment; nothing was settled.',
  },
  seller_misconfigured: {
    status: 500,
    message: 'This paid endpoint is misconfigured on the seller side; the operator has been told.',
  },
  x402_path_refused: {
    status: 400,
    message:
      'The request path cannot be read one way only (a backslash, an encoded dot, slash or percent, a dot or empty segment, a ";" path parameter, a Unicode compatibility character, or a character outside a URL path); spell it plainly. Nothing was charged.',
  },
  // x402 `payment-identifier` (docs/seller-middleware.md#payment-identifier): a retried paid request answered, not paid again.
  payment_identifier_invalid: {
    status: 400,
    message: 'The payment-identifier id must be 16 to 128 characters of A-Z, a-z, 0-9, _ or -; nothing was paid.',
  },
  payment_identifier_required: {
    status: 400,
    message: 'This endpoint requires a payment-identifier id in the payment; nothing was paid.',
  },
  payment_identifier_conflict: {
    status: 409,
    message:
      'This payment identifier was already used for another payment or request; nothing was paid or signed for this one. Use a new identifier (a new purchase).',
  },
  payment_identifier_in_flight: {
    status: 409,
    message: 'A request with this payment-identifier id is still being processed; retry shortly.',
  },
  payment_identifier_not_replayable: {
    status: 410,
    message: 'This payment settled, but its answer was too large to keep; the receipt is in PAYMENT-RESPONSE.',
  },
  payment_identifier_unavailable: {
    status: 503,
    message: 'The seller cannot check payment-identifier ids right now; nothing was paid, retry shortly.',
  },
  ...GATE_AND_DISCOVERY_ERROR_CODES,
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Codes kept in the list for clients that know them but no longer produced: ledger_conflict (docs/adr/0009). */
export const RETIRED_ERROR_CODES = ['ledger_conflict'] as const satisfies readonly ErrorCode[];
