/**
 * The x402 layer: wire schemas and header codecs, the facilitator client, and (under ./koa) the seller
 * middleware.
 */
export * from './wire-schemas.js';
export * from './header-codec.js';
export { decodeBase64Json, encodeBase64Json, MAX_X402_HEADER_BYTES } from './base64-json.js';
export { parseJsonSafely } from './safe-json.js';
export { X402DecodeError, type X402DecodeReason } from './x402-decode-error.js';
export * from './facilitator-client.js';
