/**
 * The owner-signed policy document (docs/adr/0012-owner-signed-policies.md): what a wallet's policy
 * authority signs so that the signer, not the API, decides which policy a wallet is under. An EIP-712
 * message in one of two forms, named by the document's `form` (absent: `policy_hash`):
 * - `policy_hash`: `WalletPolicy(string wallet, bytes32 policyHash, uint64 version, uint64 issuedAt)` in the domain
 *   `{ name: "Treasury wallet policy", version: "1" }`, `policyHash` keccak-256 over the policy's canonical JSON;
 * - `policy_text`: `WalletPolicy(string wallet, string policy, uint64 version, uint64 issuedAt)` in the domain
 *   `{ name: "Treasury wallet policy", version: "2" }`, `policy` the canonical JSON itself, so that a browser wallet
 *   shows the owner the policy's text rather than a hash (no blind signing). EIP-712 encodes a string as keccak-256
 *   of its bytes, so the field's encoding is `policyHash` again: the digests differ by type hash and domain only.
 * No chain id: a policy is the wallet's on every chain. The canonical JSON is the policy's normalised form, keys
 * sorted, so the API, the CLI, the dashboard and the signer each compute it on their own and agree byte for byte.
 *
 * Defends: a policy document the authority did not sign, or signed for another wallet, or a policy other
 * than the one signed (the hash binds every field, in its one canonical spelling); an older document sent
 * again (the signer keeps only the current version + 1, signed within a day: signer/owner-policy/owner-policies.ts);
 * a signature read under the other form (each form's digest is its own: a signature recovers to the authority
 * only under the form it was made in, and the form is said, never guessed — guessing would let one signature
 * name two keys, and bind a first signer ambiguously).
 * Does not defend: what the signer checks with it (signer/owner-policy/), nor who the authority is — that is
 * recorded by the signer when the wallet is made.
 */
import { z } from 'zod';
import { getAddress, keccak256, stringToBytes } from 'viem';
import { canonicalJson } from '../base/canonical-json.js';
import { normalizePolicy } from './normalize-policy.js';
import type { WalletPolicy } from './policy-schema.js';

/** How a document's signature spells the policy: by its hash (domain version "1") or by its text (version "2"). */
export const policySignatureFormSchema = z.enum(['policy_hash', 'policy_text']);
export type PolicySignatureForm = z.infer<typeof policySignatureFormSchema>;
/** The form of a document that names none: every document signed before the text form existed. */
export const DEFAULT_POLICY_SIGNATURE_FORM: PolicySignatureForm = 'policy_hash';

export const POLICY_DOCUMENT_DOMAIN = { name: 'Treasury wallet policy', version: '1' } as const;
export const POLICY_DOCUMENT_PRIMARY_TYPE = 'WalletPolicy';
export const POLICY_DOCUMENT_TYPES = {
  WalletPolicy: [
    { name: 'wallet', type: 'string' },
    { name: 'policyHash', type: 'bytes32' },
    { name: 'version', type: 'uint64' },
    { name: 'issuedAt', type: 'uint64' },
  ],
} as const;
/** The `policy_text` form: the same name, its own domain version, the policy's canonical JSON as a string field. */
export const POLICY_TEXT_DOCUMENT_DOMAIN = { ...POLICY_DOCUMENT_DOMAIN, version: '2' } as const;
export const POLICY_TEXT_DOCUMENT_TYPES = {
  WalletPolicy: [
    { name: 'wallet', type: 'string' },
    { name: 'policy', type: 'string' },
    { name: 'version', type: 'uint64' },
    { name: 'issuedAt', type: 'uint64' },
  ],
} as const;

/** Versions are counted from 1; the bound keeps them exact in a JavaScript number and in PostgreSQL's bigint. */
export const MAX_POLICY_VERSION = 2 ** 48;
/** Unix seconds; the bound is the year 10,000 or so. */
export const MAX_ISSUED_AT = 253_402_300_799;

/** What travels beside a policy to make it a signed document: its version, when it was signed, the signature. */
export const policySignatureFieldsSchema = z
  .object({
    version: z.number().int().min(1).max(MAX_POLICY_VERSION),
    issued_at: z.number().int().min(0).max(MAX_ISSUED_AT),
    /**
     * An EVM authority's 65-byte r‖s‖v over the EIP-712 digest (`eth_signTypedData_v4`, viem's `signTypedData`),
     * or a Solana authority's 64-byte Ed25519 signature over the statement text (./policy-statement.ts); 0x hex.
     */
    signature: z
      .string()
      .regex(
        /^0x(?:[0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/,
        'expected a 65-byte (EIP-712) or 64-byte (Ed25519) 0x-prefixed hex signature',
      ),
    /**
     * Which EIP-712 form a 65-byte signature is over (absent: `policy_hash`, the form every earlier document is
     * in). `policy_text` names no Ed25519 statement: the signer refuses it beside a 64-byte signature.
     */
    form: policySignatureFormSchema.optional(),
  })
  .strict();
export type PolicySignatureFields = z.infer<typeof policySignatureFieldsSchema>;

/** The wallet as the document names it: an EVM address in its EIP-55 form, a Solana address as it is (base58). */
export function policyDocumentWallet(address: string): string {
  return address.startsWith('0x') ? getAddress(address) : address;
}

/** The canonical JSON of the normalised policy: the `policy` string of the `policy_text` form. */
export function policyDocumentText(policy: WalletPolicy): string {
  return canonicalJson(normalizePolicy(policy));
}

/** keccak-256 over the canonical JSON of the normalised policy: the `policyHash` every party computes. */
export function policyDocumentHash(policy: WalletPolicy): `0x${string}` {
  return keccak256(stringToBytes(policyDocumentText(policy)));
}

export interface PolicyDocumentInput {
  wallet: string;
  policy: WalletPolicy;
  version: number;
  issuedAt: number;
}

/** The typed data of the `policy_hash` form (viem's `signTypedData` / `recoverTypedDataAddress` take it as is). */
export function policyTypedData(input: PolicyDocumentInput) {
  return {
    domain: POLICY_DOCUMENT_DOMAIN,
    types: POLICY_DOCUMENT_TYPES,
    primaryType: POLICY_DOCUMENT_PRIMARY_TYPE,
    message: {
      wallet: policyDocumentWallet(input.wallet),
      policyHash: policyDocumentHash(input.policy),
      version: BigInt(input.version),
      issuedAt: BigInt(input.issuedAt),
    },
  } as const;
}

/** The typed data of the `policy_text` form: the policy spelled out, what the owner's wallet shows. */
export function policyTextTypedData(input: PolicyDocumentInput) {
  return {
    domain: POLICY_TEXT_DOCUMENT_DOMAIN,
    types: POLICY_TEXT_DOCUMENT_TYPES,
    primaryType: POLICY_DOCUMENT_PRIMARY_TYPE,
    message: {
      wallet: policyDocumentWallet(input.wallet),
      policy: policyDocumentText(input.policy),
      version: BigInt(input.version),
      issuedAt: BigInt(input.issuedAt),
    },
  } as const;
}

/** The typed data of `form` (absent: `policy_hash`), in viem's shape. */
export function policyTypedDataOf(form: PolicySignatureForm | undefined, input: PolicyDocumentInput) {
  return (form ?? DEFAULT_POLICY_SIGNATURE_FORM) === 'policy_text'
    ? policyTextTypedData(input)
    : policyTypedData(input);
}

/**
 * The typed data of `form` (absent: `policy_hash`) as a browser wallet's `eth_signTypedData_v4` takes it: the
 * domain's own type spelled out and the integers as decimal strings (JSON has no bigint).
 */
export function policyTypedDataV4(input: PolicyDocumentInput, form?: PolicySignatureForm) {
  const data = policyTypedDataOf(form, input);
  return {
    domain: data.domain,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
      ],
      ...data.types,
    },
    primaryType: data.primaryType,
    message: { ...data.message, version: String(input.version), issuedAt: String(input.issuedAt) },
  };
}
