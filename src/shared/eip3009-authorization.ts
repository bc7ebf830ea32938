/**
 * The EIP-3009 TransferWithAuthorization message as x402 `exact` carries it (decimal strings): the x402 wire
 * codecs (src/x402/wire-schemas.ts) and the API's signed-payment reply (./api-responses/pay-responses.ts) both
 * use this one schema.
 *
 * Defends against: malformed addresses, amounts, times and nonces (amounts and times are base-10 integer
 * strings without sign or leading zeros, below 2^256). Does not defend against: an authorization for another
 * payee or amount (the seller middleware and the buyer compare it with their terms).
 */
import { z } from 'zod';
import { isRawAmount } from '../../policy/money.js';

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
const uintString = z
  .string()
  .refine(isRawAmount, 'expected a raw token amount (base-10 integer string, no sign or leading zeros)');
const bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex value');

export const eip3009AuthorizationSchema = z
  .object({
    from: evmAddress,
    to: evmAddress,
    value: uintString,
    validAfter: uintString,
    validBefore: uintString,
    nonce: bytes32,
  })
  .strict();
