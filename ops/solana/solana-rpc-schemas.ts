/**
 * The wire shapes the local Solana RPC accepts: the JSON-RPC 2.0 envelope and each method's positional
 * params, every string and number bounded. Unknown config fields are dropped (kit sends some, e.g.
 * `minContextSlot`, that a chain with no forks has no use for).
 * Defends against: malformed or oversized params reaching litesvm (a wire transaction is at most 1,232
 * bytes, a signature list at most 256 entries, an airdrop at most 1,000 SOL).
 * Does not: accept encodings the chain cannot answer (`json`, `jsonParsed`): they are refused, not faked.
 */
import { isAddress, isSignature } from '@solana/kit';
import { z } from 'zod';

/** A Solana packet is 1,232 bytes: base64 of it is 1,644 characters, base58 at most 1,685. */
const MAX_ENCODED_TRANSACTION = 2_048;
const MAX_SIGNATURES_PER_CALL = 256;
export const MAX_AIRDROP_LAMPORTS = 1_000_000_000_000;

export const jsonRpcRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string().max(128), z.number().int().safe(), z.null()]).optional(),
  method: z.string().min(1).max(64),
  params: z.array(z.unknown()).max(4).optional(),
});
export type JsonRpcRequest = z.infer<typeof jsonRpcRequestSchema>;

/** A base58 address (kept a string here: kit's branded type cannot be named in emitted declarations). */
export const addressSchema = z
  .string()
  .min(32)
  .max(44)
  .refine((value) => isAddress(value), 'not a base58 Solana address');

const signatureSchema = z
  .string()
  .min(64)
  .max(88)
  .refine((value) => isSignature(value), 'not a base58 transaction signature');

const commitmentSchema = z.enum(['processed', 'confirmed', 'finalized']).optional();

/** Config of the read methods: a commitment (every slot is final here) and an encoding where one applies. */
const readConfigSchema = z
  .object({ commitment: commitmentSchema, encoding: z.literal('base64').optional() })
  .optional();

const wireEncodingSchema = z.enum(['base58', 'base64']).default('base58');

export const paramsSchemas = {
  getLatestBlockhash: z.tuple([readConfigSchema]).or(z.tuple([])),
  getSlot: z.tuple([readConfigSchema]).or(z.tuple([])),
  getHealth: z.tuple([]),
  getVersion: z.tuple([]),
  getGenesisHash: z.tuple([]),
  getAccountInfo: z.tuple([addressSchema, readConfigSchema]).or(z.tuple([addressSchema])),
  getBalance: z.tuple([addressSchema, readConfigSchema]).or(z.tuple([addressSchema])),
  getTokenAccountBalance: z.tuple([addressSchema, readConfigSchema]).or(z.tuple([addressSchema])),
  simulateTransaction: z.tuple([
    z.string().min(1).max(MAX_ENCODED_TRANSACTION),
    z
      .object({
        encoding: wireEncodingSchema,
        sigVerify: z.boolean().default(false),
        replaceRecentBlockhash: z.boolean().default(false),
        commitment: commitmentSchema,
      })
      .default({ encoding: 'base58', sigVerify: false, replaceRecentBlockhash: false }),
  ]),
  sendTransaction: z.tuple([
    z.string().min(1).max(MAX_ENCODED_TRANSACTION),
    z
      .object({
        encoding: wireEncodingSchema,
        skipPreflight: z.boolean().default(false),
        preflightCommitment: commitmentSchema,
        maxRetries: z.number().int().min(0).max(100).optional(),
      })
      .default({ encoding: 'base58', skipPreflight: false }),
  ]),
  getSignatureStatuses: z.tuple([
    z.array(signatureSchema).max(MAX_SIGNATURES_PER_CALL),
    z.object({ searchTransactionHistory: z.boolean().optional() }).optional(),
  ]),
  getTransaction: z.tuple([
    signatureSchema,
    z.object({
      encoding: z.literal('base64'),
      commitment: commitmentSchema,
      maxSupportedTransactionVersion: z.number().int().min(0).max(0).optional(),
    }),
  ]),
  requestAirdrop: z
    .tuple([addressSchema, z.number().int().min(1).max(MAX_AIRDROP_LAMPORTS), readConfigSchema])
    .or(z.tuple([addressSchema, z.number().int().min(1).max(MAX_AIRDROP_LAMPORTS)])),
} as const;

export type RpcMethodName = keyof typeof paramsSchemas;
export type RpcParams<M extends RpcMethodName> = z.infer<(typeof paramsSchemas)[M]>;

export function isRpcMethodName(name: string): name is RpcMethodName {
  return Object.hasOwn(paramsSchemas, name);
}
