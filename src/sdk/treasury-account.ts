/**
 * `treasuryAccount`: a Treasury-managed wallet as a viem custom account (`toAccount` from `viem/accounts`),
 * so viem-based tools — e.g. the official `@x402/fetch` client with the exact EVM scheme — can pay with a
 * key they never see. It signs only EIP-3009 `TransferWithAuthorization` typed data, and only through
 * Treasury's pay endpoint (the wallet's policy is checked, the spend recorded, the audit written): the typed
 * data becomes the equivalent x402 accepts entry (`exact`, `eip155:<chainId>`, payTo = `to`, amount =
 * `value`, asset = `verifyingContract`, extra = domain name and version) plus the caller's own terms (nonce,
 * valid_after, valid_before). The authorization Treasury returns must equal the message asked for, field by
 * field, before the signature is handed back.
 *
 * Defends against: a viem tool getting a general-purpose signer (messages, transactions and any other typed
 * data — including a `TransferWithAuthorization` with other fields, a salted domain or another `from` — are
 * refused before any call); a signature for something other than what the tool asked for.
 * Does not defend against: a tool that asks for a payment the wallet's policy allows but the user did not
 * mean — the wallet's policy (and a PAT daily cap) is the control.
 */
import { getAddress, type LocalAccount } from 'viem';
import { toAccount } from 'viem/accounts';
import { z } from 'zod';
import { mapRecoveryError } from './map-recovery-error.js';
import { SignatureMismatchError, UnsupportedSignatureError } from './sdk-errors.js';
import { parseArgument, type TreasuryClient } from './treasury-client.js';
import { capabilitySchema, evmAddressSchema, walletIdSchema } from './treasury-client-schemas.js';

const optionsSchema = z
  .object({
    client: z.custom<Pick<TreasuryClient, 'pay' | 'getWallet'>>((c) => typeof c === 'object' && c !== null && typeof (c as TreasuryClient).pay === 'function' && typeof (c as TreasuryClient).getWallet === 'function', 'expected a TreasuryClient'),
    walletId: walletIdSchema,
    /** Capability sent with each signature (matched against the wallet's capability caps). */
    capability: capabilitySchema.optional(),
  })
  .strict();
export type TreasuryAccountOptions = z.input<typeof optionsSchema>;

/** The EIP-3009 struct, field for field: any other definition would hash to a different digest. */
const EIP3009_FIELDS = [
  ['from', 'address'],
  ['to', 'address'],
  ['value', 'uint256'],
  ['validAfter', 'uint256'],
  ['validBefore', 'uint256'],
  ['nonce', 'bytes32'],
] as const;

const uint = z
  .union([z.bigint().nonnegative(), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^(0|[1-9][0-9]{0,77})$/)])
  .transform((v) => BigInt(v).toString());

const transferWithAuthorizationSchema = z
  .object({
    primaryType: z.literal('TransferWithAuthorization'),
    domain: z
      .object({
        name: z.string().min(1).max(64),
        version: z.string().min(1).max(16),
        chainId: z.union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.bigint().positive()]).transform((v) => BigInt(v).toString()),
        verifyingContract: evmAddressSchema,
      })
      .strict(),
    types: z
      .object({ TransferWithAuthorization: z.array(z.object({ name: z.string(), type: z.string() }).strict()) })
      .loose()
      .refine(
        (t) => t.TransferWithAuthorization.length === EIP3009_FIELDS.length && EIP3009_FIELDS.every(([name, type], i) => t.TransferWithAuthorization[i]?.name === name && t.TransferWithAuthorization[i]?.type === type),
        'types.TransferWithAuthorization is not the EIP-3009 struct',
      ),
    message: z
      .object({
        from: evmAddressSchema,
        to: evmAddressSchema,
        value: uint,
        validAfter: uint,
        validBefore: uint,
        nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte hex nonce').transform((v) => v.toLowerCase()),
      })
      .strict(),
  })
  .loose();

const refuse = (what: string) => async (): Promise<never> => {
  throw new UnsupportedSignatureError(`A Treasury account signs only EIP-3009 TransferWithAuthorization typed data, not ${what}.`);
};

/** Reads the wallet (its address) and returns it as a viem account that signs only EIP-3009 through Treasury. */
export async function treasuryAccount(options: TreasuryAccountOptions): Promise<LocalAccount> {
  const o = parseArgument(optionsSchema, options, 'options');
  const wallet = await o.client.getWallet(o.walletId).catch((err: unknown) => {
    throw mapRecoveryError(err);
  });
  const address = getAddress(wallet.address);

  return toAccount({
    address,
    signMessage: refuse('messages'),
    signTransaction: refuse('transactions'),
    async signTypedData(typedData) {
      const primaryType = (typedData as { primaryType?: unknown }).primaryType;
      if (primaryType !== 'TransferWithAuthorization') return refuse(`${String(primaryType)} typed data`)();
      const parsed = transferWithAuthorizationSchema.safeParse(typedData);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new UnsupportedSignatureError(`Refused TransferWithAuthorization typed data: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'malformed'}.`);
      }
      const { domain, message: m } = parsed.data;
      if (getAddress(m.from) !== address) throw new UnsupportedSignatureError(`The authorization is from ${m.from}, not this wallet (${address}).`);

      // Treasury bounds the caller's window by maxTimeoutSeconds: ask for exactly the window requested.
      const remaining = BigInt(m.validBefore) - BigInt(Math.floor(Date.now() / 1000));
      const maxTimeoutSeconds = Number(remaining < 1n ? 1n : remaining > 86_400n ? 86_400n : remaining);
      let signed;
      try {
        signed = await o.client.pay(o.walletId, {
          paymentRequirements: {
            scheme: 'exact',
            network: `eip155:${domain.chainId}`,
            payTo: getAddress(m.to),
            amount: m.value,
            asset: getAddress(domain.verifyingContract),
            extra: { name: domain.name, version: domain.version },
            maxTimeoutSeconds,
          },
          authorization: { nonce: m.nonce, valid_after: m.validAfter, valid_before: m.validBefore },
          ...(o.capability !== undefined ? { capability: o.capability } : {}),
        });
      } catch (err) {
        throw mapRecoveryError(err);
      }
      const a = signed.authorization;
      const differing = [
        getAddress(a.from) !== address && 'from',
        getAddress(a.to) !== getAddress(m.to) && 'to',
        a.value !== m.value && 'value',
        a.validAfter !== m.validAfter && 'validAfter',
        a.validBefore !== m.validBefore && 'validBefore',
        a.nonce.toLowerCase() !== m.nonce && 'nonce',
        signed.network !== `eip155:${domain.chainId}` && 'network',
        signed.asset.toLowerCase() !== domain.verifyingContract.toLowerCase() && 'asset',
      ].filter((x): x is string => typeof x === 'string');
      if (differing.length > 0) throw new SignatureMismatchError(differing.join(', '));
      return signed.signature as `0x${string}`;
    },
  });
}
