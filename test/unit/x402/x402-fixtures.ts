/**
 * Shared fixtures of the x402 tests: the hostile-input table, a seller and a buyer, a challenge builder, and
 * payment payloads signed for real — with viem (EIP-3009 TransferWithAuthorization typed data) or with the
 * official `x402Client` + `ExactEvmScheme`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../../signer/eip3009/hash-transfer-authorization.js';

export const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

export const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' as const;
export const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e' as const;
/** A throwaway test key (never funded anywhere). */
export const BUYER_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318' as const;
export const buyer = privateKeyToAccount(BUYER_KEY);

export function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:84532',
    payTo: SELLER,
    amount: '10000',
    asset: BASE_SEPOLIA_USDC,
    extra: { name: 'USDC', version: '2' },
    maxTimeoutSeconds: 300,
    resource: 'http://127.0.0.1/paid',
    description: '',
    mimeType: 'application/json',
    ...overrides,
  };
}

export function challenge(accepts: PaymentRequirements[] = [requirements()]): PaymentRequired {
  return {
    x402Version: 2,
    error: 'payment_required',
    resource: { url: 'http://127.0.0.1/paid', description: '', mimeType: 'application/json' },
    accepts,
  };
}

const CHAIN_IDS: Record<string, number> = { 'eip155:84532': 84532, 'eip155:8453': 8453 };

/** A v2 payment for `accepted`, signed with viem; `authorization` fields may be overridden before signing. */
export async function signExactPayment(
  accepted: PaymentRequirements,
  overrides: Partial<{
    from: `0x${string}`;
    to: string;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: string;
  }> = {},
  account = buyer,
): Promise<PaymentPayload> {
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: account.address,
    to: accepted.payTo,
    value: accepted.amount,
    validAfter: '0',
    validBefore: String(now + accepted.maxTimeoutSeconds),
    nonce: `0x${randomBytes(32).toString('hex')}`,
    ...overrides,
  };
  const signature = await account.signTypedData({
    domain: {
      name: accepted.extra!.name!,
      version: accepted.extra!.version!,
      chainId: CHAIN_IDS[accepted.network] ?? Number(accepted.network.split(':')[1]),
      verifyingContract: getAddress(accepted.asset.toLowerCase()),
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from,
      to: getAddress(authorization.to.toLowerCase()),
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as `0x${string}`,
    },
  });
  return {
    x402Version: 2,
    resource: { url: accepted.resource ?? 'http://127.0.0.1/paid' },
    accepted,
    payload: { signature, authorization },
  };
}

/** The official client (default spend controls: Base/Base Sepolia USDC, at most $1 per payment). */
export function officialClient(account = buyer): x402Client {
  return new x402Client().register('eip155:*', new ExactEvmScheme(account));
}
