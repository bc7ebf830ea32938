/**
 * `treasuryAccount`: a Treasury-managed wallet as a viem custom account (`toAccount` from `viem/accounts`),
 * so viem-based tools — e.g. the official `@x402/fetch` client with the exact EVM scheme — can pay with a
 * key they never see. It signs only EIP-3009 `TransferWithAuthorization` typed data and the x402 `upto`
 * Permit2 `PermitWitnessTransferFrom` (witness `{to, facilitator, validAfter}`), and only through Treasury's
 * pay endpoint (the wallet's policy is checked, the spend recorded, the audit written): the typed data
 * becomes the equivalent x402 accepts entry (`exact`: payTo = `to`, amount = `value`, asset =
 * `verifyingContract`, extra = domain name and version; `upto`: payTo = `witness.to`, amount =
 * `permitted.amount`, asset = `permitted.token`, extra.facilitatorAddress = `witness.facilitator`) plus the
 * caller's own terms (nonce, valid_after, valid_before / deadline). What Treasury returns must equal the
 * message asked for, field by field, before the signature is handed back.
 *
 * Defends against: a viem tool getting a general-purpose signer (messages, transactions and any other typed
 * data — including a `TransferWithAuthorization` with other fields, a salted domain or another `from` — are
 * refused before any call); a signature for something other than what the tool asked for; Treasury briefly out
 * of reach while signing (each signature is asked for under an Idempotency-Key of its own, which
 * TreasuryClient retries a 503 or a lost answer with).
 * Does not defend against: a tool that asks for a payment the wallet's policy allows but the user did not
 * mean — the wallet's policy (and a PAT daily cap) is the control.
 */
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { getAddress, type LocalAccount } from 'viem';
import { toAccount } from 'viem/accounts';
import { z } from 'zod';
import { mapRecoveryError } from './map-recovery-error.js';
import { newIdempotencyKey } from './new-idempotency-key.js';
import { SignatureMismatchError, UnsupportedSignatureError } from './sdk-errors.js';
import { parseArgument, type TreasuryClient } from './treasury-client.js';
import {
  capabilitySchema,
  evmAddressSchema,
  isSolanaPayReply,
  objectWithMethods,
  walletIdSchema,
  type SignedPayment,
} from './treasury-client-schemas.js';

const optionsSchema = z
  .object({
    client: objectWithMethods<Pick<TreasuryClient, 'pay' | 'getWallet'>>(
      ['pay', 'getWallet'],
      'expected a TreasuryClient',
    ),
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
  .union([
    z.bigint().nonnegative(),
    z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    z.string().regex(/^(0|[1-9][0-9]{0,77})$/),
  ])
  .transform((v) => BigInt(v).toString());

const transferWithAuthorizationSchema = z
  .object({
    primaryType: z.literal('TransferWithAuthorization'),
    domain: z
      .object({
        name: z.string().min(1).max(64),
        version: z.string().min(1).max(16),
        chainId: z
          .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.bigint().positive()])
          .transform((v) => BigInt(v).toString()),
        verifyingContract: evmAddressSchema,
      })
      .strict(),
    types: z
      .object({ TransferWithAuthorization: z.array(z.object({ name: z.string(), type: z.string() }).strict()) })
      .loose()
      .refine(
        (t) =>
          t.TransferWithAuthorization.length === EIP3009_FIELDS.length &&
          EIP3009_FIELDS.every(
            ([name, type], i) =>
              t.TransferWithAuthorization[i]?.name === name && t.TransferWithAuthorization[i]?.type === type,
          ),
        'types.TransferWithAuthorization is not the EIP-3009 struct',
      ),
    message: z
      .object({
        from: evmAddressSchema,
        to: evmAddressSchema,
        value: uint,
        validAfter: uint,
        validBefore: uint,
        nonce: z
          .string()
          .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte hex nonce')
          .transform((v) => v.toLowerCase()),
      })
      .strict(),
  })
  .loose();

/** The x402 upto Permit2 structs, field for field. */
const PERMIT2_UPTO_TYPES: Record<string, ReadonlyArray<readonly [string, string]>> = {
  PermitWitnessTransferFrom: [
    ['permitted', 'TokenPermissions'],
    ['spender', 'address'],
    ['nonce', 'uint256'],
    ['deadline', 'uint256'],
    ['witness', 'Witness'],
  ],
  TokenPermissions: [
    ['token', 'address'],
    ['amount', 'uint256'],
  ],
  Witness: [
    ['to', 'address'],
    ['facilitator', 'address'],
    ['validAfter', 'uint256'],
  ],
};
const fieldList = z.array(z.object({ name: z.string(), type: z.string() }).strict());

const permitWitnessTransferSchema = z
  .object({
    primaryType: z.literal('PermitWitnessTransferFrom'),
    domain: z
      .object({
        name: z.literal('Permit2'),
        chainId: z
          .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.bigint().positive()])
          .transform((v) => BigInt(v).toString()),
        verifyingContract: evmAddressSchema.refine(
          (a) => getAddress(a) === PERMIT2_ADDRESS,
          'expected the canonical Permit2 contract',
        ),
      })
      .strict(),
    types: z
      .object({ PermitWitnessTransferFrom: fieldList, TokenPermissions: fieldList, Witness: fieldList })
      .loose()
      .refine(
        (t) =>
          Object.entries(PERMIT2_UPTO_TYPES).every(([struct, fields]) => {
            const got = t[struct as keyof typeof t] as Array<{ name: string; type: string }>;
            return (
              got.length === fields.length &&
              fields.every(([name, type], i) => got[i]?.name === name && got[i]?.type === type)
            );
          }),
        'types are not the x402 upto Permit2 witness structs',
      ),
    message: z
      .object({
        permitted: z.object({ token: evmAddressSchema, amount: uint }).strict(),
        spender: evmAddressSchema.refine(
          (a) => getAddress(a) === getAddress(x402UptoPermit2ProxyAddress),
          'expected the x402 upto Permit2 proxy as spender',
        ),
        nonce: uint,
        deadline: uint,
        witness: z.object({ to: evmAddressSchema, facilitator: evmAddressSchema, validAfter: uint }).strict(),
      })
      .strict(),
  })
  .loose();

const refuse = (what: string) => async (): Promise<never> => {
  throw new UnsupportedSignatureError(
    `A Treasury account signs only EIP-3009 TransferWithAuthorization and x402 upto Permit2 typed data, not ${what}.`,
  );
};

/** maxTimeoutSeconds for a window that ends at `end`: Treasury bounds the caller's window by it. */
function timeoutUntil(end: string): number {
  const remaining = BigInt(end) - BigInt(Math.floor(Date.now() / 1000));
  return Number(remaining < 1n ? 1n : remaining > 86_400n ? 86_400n : remaining);
}

function parseTyped<T>(schema: z.ZodType<T>, typedData: unknown, what: string): T {
  const parsed = schema.safeParse(typedData);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnsupportedSignatureError(
      `Refused ${what} typed data: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'malformed'}.`,
    );
  }
  return parsed.data;
}

/** Refuses a signature whose signed fields differ from what was asked (the differing fields named). */
function assertSame(differing: ReadonlyArray<string | false>): void {
  const names = differing.filter((x): x is string => typeof x === 'string');
  if (names.length > 0) throw new SignatureMismatchError(names.join(', '));
}

/** The fields of a signed Permit2 authorization that differ from the typed data asked for. */
function permit2Differences(
  signed: Extract<SignedPayment, { scheme: 'upto' }>,
  { domain, message: m }: Pick<z.infer<typeof permitWitnessTransferSchema>, 'domain' | 'message'>,
  address: string,
): Array<string | false> {
  const a = signed.permit2_authorization;
  return [
    getAddress(a.from) !== address && 'from',
    getAddress(a.permitted.token) !== getAddress(m.permitted.token) && 'permitted.token',
    a.permitted.amount !== m.permitted.amount && 'permitted.amount',
    getAddress(a.spender) !== getAddress(m.spender) && 'spender',
    a.nonce !== m.nonce && 'nonce',
    a.deadline !== m.deadline && 'deadline',
    getAddress(a.witness.to) !== getAddress(m.witness.to) && 'witness.to',
    getAddress(a.witness.facilitator) !== getAddress(m.witness.facilitator) && 'witness.facilitator',
    a.witness.validAfter !== m.witness.validAfter && 'witness.validAfter',
    signed.network !== `eip155:${domain.chainId}` && 'network',
  ];
}

/** The fields of a signed EIP-3009 authorization that differ from the typed data asked for. */
function authorizationDifferences(
  signed: Exclude<SignedPayment, { scheme: 'upto' }>,
  { domain, message: m }: Pick<z.infer<typeof transferWithAuthorizationSchema>, 'domain' | 'message'>,
  address: string,
): Array<string | false> {
  const a = signed.authorization;
  return [
    getAddress(a.from) !== address && 'from',
    getAddress(a.to) !== getAddress(m.to) && 'to',
    a.value !== m.value && 'value',
    a.validAfter !== m.validAfter && 'validAfter',
    a.validBefore !== m.validBefore && 'validBefore',
    a.nonce.toLowerCase() !== m.nonce && 'nonce',
    signed.network !== `eip155:${domain.chainId}` && 'network',
    signed.asset.toLowerCase() !== domain.verifyingContract.toLowerCase() && 'asset',
  ];
}

/** Reads the wallet (its address) and returns it as a viem account that signs only EIP-3009 through Treasury. */
export async function treasuryAccount(options: TreasuryAccountOptions): Promise<LocalAccount> {
  const o = parseArgument(optionsSchema, options, 'options');
  const wallet = await o.client.getWallet(o.walletId).catch((err: unknown) => {
    throw mapRecoveryError(err);
  });
  const address = getAddress(wallet.address);

  const pay = async (input: Parameters<Pick<TreasuryClient, 'pay'>['pay']>[1]): Promise<SignedPayment> => {
    let signed;
    try {
      // An Idempotency-Key per signature asked for: TreasuryClient retries a 503 or a lost answer as this same payment.
      signed = await o.client.pay(o.walletId, {
        ...input,
        idempotencyKey: newIdempotencyKey('account'),
        ...(o.capability !== undefined ? { capability: o.capability } : {}),
      });
    } catch (err) {
      throw mapRecoveryError(err);
    }
    // Only EVM typed data is asked for here: a Solana transaction in reply is not what was asked.
    if (isSolanaPayReply(signed)) throw new SignatureMismatchError('a Solana transaction for EVM typed data');
    return signed;
  };

  async function signPermit2(typedData: unknown): Promise<`0x${string}`> {
    const { domain, message: m } = parseTyped(permitWitnessTransferSchema, typedData, 'PermitWitnessTransferFrom');
    const signed = await pay({
      paymentRequirements: {
        scheme: 'upto',
        network: `eip155:${domain.chainId}`,
        payTo: getAddress(m.witness.to),
        amount: m.permitted.amount,
        asset: getAddress(m.permitted.token),
        extra: { facilitatorAddress: getAddress(m.witness.facilitator), assetTransferMethod: 'permit2' },
        maxTimeoutSeconds: timeoutUntil(m.deadline),
      },
      authorization: { nonce: m.nonce, valid_after: m.witness.validAfter, valid_before: m.deadline },
    });
    if (signed.scheme !== 'upto') throw new SignatureMismatchError('scheme');
    assertSame(permit2Differences(signed, { domain, message: m }, address));
    return signed.signature as `0x${string}`;
  }

  return toAccount({
    address,
    signMessage: refuse('messages'),
    signTransaction: refuse('transactions'),
    async signTypedData(typedData) {
      const primaryType = (typedData as { primaryType?: unknown }).primaryType;
      if (primaryType === 'PermitWitnessTransferFrom') return signPermit2(typedData);
      if (primaryType !== 'TransferWithAuthorization') return refuse(`${String(primaryType)} typed data`)();
      const { domain, message: m } = parseTyped(
        transferWithAuthorizationSchema,
        typedData,
        'TransferWithAuthorization',
      );
      if (getAddress(m.from) !== address)
        throw new UnsupportedSignatureError(`The authorization is from ${m.from}, not this wallet (${address}).`);

      // Treasury bounds the caller's window by maxTimeoutSeconds: ask for exactly the window requested.
      const signed = await pay({
        paymentRequirements: {
          scheme: 'exact',
          network: `eip155:${domain.chainId}`,
          payTo: getAddress(m.to),
          amount: m.value,
          asset: getAddress(domain.verifyingContract),
          extra: { name: domain.name, version: domain.version },
          maxTimeoutSeconds: timeoutUntil(m.validBefore),
        },
        authorization: { nonce: m.nonce, valid_after: m.validAfter, valid_before: m.validBefore },
      });
      if (signed.scheme === 'upto') throw new SignatureMismatchError('scheme');
      assertSame(authorizationDifferences(signed, { domain, message: m }, address));
      return signed.signature as `0x${string}`;
    },
  });
}
