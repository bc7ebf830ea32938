/**
 * The gate's own error codes (docs/gate.md) and the public catalogue's (docs/api.md#discovery), with their HTTP
 * status and default user message: part of the one list of codes (./error-codes.ts spreads them into
 * ERROR_CODES), kept in a file of their own so that list stays readable.
 */
export const GATE_AND_DISCOVERY_ERROR_CODES = {
  // The gate (docs/gate.md): its own answers, beside the paywall's.
  gate_not_ready: { status: 503, message: 'The gate has not loaded its seller catalogue yet; retry shortly.' },
  gate_seller_not_found: { status: 404, message: 'No seller of this gate answers at this host or path prefix.' },
  gate_endpoint_not_found: { status: 404, message: 'The seller sells no endpoint at this method and path.' },
  gate_origin_unreachable: {
    status: 502,
    message: "The seller's origin could not be reached; no payment was settled.",
  },
  gate_origin_timeout: {
    status: 504,
    message: "The seller's origin did not answer in time; no payment was settled.",
  },
  gate_origin_refused: {
    status: 502,
    message:
      "The gate does not send requests to this seller's origin (not verified, or on an address it may not reach); nothing was forwarded or settled.",
  },
  gate_path_refused: {
    status: 400,
    message:
      'The request path cannot be read one way only (a backslash, an encoded dot, slash or percent, a dot or empty segment, a ";" path parameter, a Unicode compatibility character, or a character outside a URL path); spell it plainly.',
  },
  gate_method_override_refused: {
    status: 400,
    message:
      'The request asks the origin to run another method (an X-HTTP-Method-Override, X-HTTP-Method or X-Method-Override header naming another method, or a _method parameter in the query or the body); send it with that method instead.',
  },
  // The public catalogue (GET /discovery/resources, GET /discovery/search; docs/api.md#discovery).
  discovery_query_invalid: {
    status: 400,
    message:
      'A discovery filter or search text is invalid: query is 1 to 200 characters of plain text, payTo an EVM address, network a CAIP-2 id, type, scheme and extensions short lower-case words.',
  },
  discovery_page_out_of_range: {
    status: 400,
    message: 'limit must be a whole number from 1 to 100, and offset (or cursor) one from 0 to 10000.',
  },
  gate_endpoint_not_priced: {
    status: 404,
    message: 'The seller has not priced this endpoint yet; it is not served until it is.',
  },
  gate_address_not_set: {
    status: 409,
    message:
      "Set the gate's public address first (POST /v1/gate/address with url; the gate does it from GATE_PUBLIC_URL).",
  },
  gate_verification_not_found: {
    status: 404,
    message: 'The gate does not serve /.well-known/xx-gate-verification.txt at its address.',
  },
  gate_verification_token_mismatch: {
    status: 409,
    message: "The gate's verification file does not contain this account's gate token.",
  },
} as const satisfies Record<string, { status: number; message: string }>;
