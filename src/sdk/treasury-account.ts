/**
 * `treasuryAccount`: a Treasury-managed wallet as a viem custom account (`toAccount`), so viem-based tools
 * — e.g. the official `@x402/fetch` client with the exact EVM scheme — can pay with it. Only EIP-3009
 * `TransferWithAuthorization` typed data is signed, through Treasury's pay endpoint (policy checked, spend
 * recorded, audit written) with the caller's nonce and window as the authorization terms; the message
 * Treasury returns must equal the one asked for, field by field, before the signature is handed back.
 *
 * Defends against: a viem tool getting a general-purpose signer (messages, transactions and any other typed
 * data are refused); a signature for something other than what the tool asked for.
 * Does not defend against: a tool that asks for a payment the wallet's policy allows but the user did not
 * mean — the wallet's policy is the control.
 */
import { getAddress, type LocalAccount, type TypedDataDefinition } from 'viem';
import { toAccount } from 'viem/accounts';
import { TreasurySdkError } from './sdk-errors.js';
import type { TreasuryClient } from './treasury-client.js';

export interface TreasuryAccountOptions {
  client: TreasuryClient;
  walletId: string;
  /** Capability sent with each signature (matched against the wallet's capability caps). */
  capability?: string;
}

const refuse = (what: string) => async (): Promise<never> => {
  throw new TreasurySdkError('unsupported_signature', `A Treasury account signs only EIP-3009 TransferWithAuthorization typed data, not ${what}.`);
};

const asUint = (v: unknown, field: string): string => {
  if (typeof v === 'bigint' && v >= 0n) return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^[0-9]{1,78}$/.test(v)) return v;
  throw new TreasurySdkError('unsupported_signature', `TransferWithAuthorization.${field} must be a non-negative integer.`);
};

export async function treasuryAccount(options: TreasuryAccountOptions): Promise<LocalAccount> {
  const wallet = await options.client.getWallet(options.walletId);
  const address = getAddress(wallet.address);

  return toAccount({
    address,
    signMessage: refuse('messages'),
    signTransaction: refuse('transactions'),
    async signTypedData(typedData) {
      const td = typedData as TypedDataDefinition & { domain?: Record<string, unknown>; message?: Record<string, unknown> };
      if (td.primaryType !== 'TransferWithAuthorization' || !td.domain || !td.message) return refuse(`${String(td.primaryType)} typed data`)();
      const { name, version, chainId, verifyingContract } = td.domain as { name?: string; version?: string; chainId?: number | bigint; verifyingContract?: string };
      if (!name || !version || chainId === undefined || !verifyingContract) throw new TreasurySdkError('unsupported_signature', 'The EIP-712 domain needs name, version, chainId and verifyingContract.');
      const m = td.message;
      if (typeof m.from !== 'string' || getAddress(m.from) !== address) throw new TreasurySdkError('unsupported_signature', `The authorization is from ${String(m.from)}, not this wallet (${address}).`);
      if (typeof m.to !== 'string' || typeof m.nonce !== 'string') throw new TreasurySdkError('unsupported_signature', 'TransferWithAuthorization needs to and nonce.');
      const value = asUint(m.value, 'value');
      const validAfter = asUint(m.validAfter, 'validAfter');
      const validBefore = asUint(m.validBefore, 'validBefore');
      const now = Math.floor(Date.now() / 1000);
      const maxTimeoutSeconds = Math.min(86_400, Math.max(1, Number(validBefore) - now));
      const signed = await options.client.pay(options.walletId, {
        paymentRequirements: {
          scheme: 'exact',
          network: `eip155:${chainId.toString()}`,
          payTo: getAddress(m.to),
          amount: value,
          asset: getAddress(verifyingContract),
          extra: { name, version },
          maxTimeoutSeconds,
        },
        authorization: { nonce: m.nonce.toLowerCase(), valid_after: validAfter, valid_before: validBefore },
        ...(options.capability ? { capability: options.capability } : {}),
      });
      const a = signed.authorization;
      const same =
        getAddress(a.from) === address &&
        getAddress(a.to) === getAddress(m.to) &&
        a.value === value &&
        a.validAfter === validAfter &&
        a.validBefore === validBefore &&
        a.nonce.toLowerCase() === m.nonce.toLowerCase();
      if (!same) throw new TreasurySdkError('signature_mismatch', 'Treasury signed a different authorization than the one requested; the signature is withheld.');
      return signed.signature as `0x${string}`;
    },
  });
}
