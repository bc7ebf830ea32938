/**
 * Sign-in attestations: SIWE (EIP-4361) for EVM, parsed and field-checked with viem's SIWE utilities and
 * verified with viem's `verifyMessage`. Returns the verified address, the nonce and the message's Expiration
 * Time. The origin and time checks are shared with SIWS (./siws-attestation.ts), so both sign-ins refuse the
 * same things alike.
 *
 * Defends: messages for another domain or URI, expired or not-yet-valid messages (a malformed Expiration
 * Time or Not Before too), issued-at in the future, bad signatures; a session outliving the message that
 * signed it in (the caller caps the session at `expiresAt`, identity-service.ts). Nonce freshness and single
 * use are the caller's job (it must consume the nonce).
 * Does not defend: smart-contract wallets (ERC-1271/6492 need a chain call; EOAs only for now).
 */
import { getAddress, verifyMessage, type Hex } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { AppError } from '../errors/app-error.js';

export interface VerifiedSignIn {
  chain: 'evm' | 'solana';
  /** Checksummed EVM address, or base58 Solana public key. */
  address: string;
  nonce: string;
  /** The message's Expiration Time, if it has one: the session it signs in ends no later. */
  expiresAt: Date | null;
}

export interface SignInExpectations {
  /** Our origin, e.g. http://127.0.0.1:8402: its host must be the domain and the URI must be on it. */
  publicUrl: string;
  /** EVM chain ids a SIWE message may name (the configured chains). */
  evmChainIds: readonly number[];
  now: Date;
  maxAgeSeconds: number;
}

/** How far a client clock may run ahead of ours (Issued At, Not Before). */
const CLOCK_SKEW_MS = 60_000;

/** Refuses a message outside its times (or with a malformed one); returns its Expiration Time, or null. */
export function checkTimes(
  issuedAt: Date | undefined,
  expiration: Date | undefined,
  notBefore: Date | undefined,
  expect: SignInExpectations,
): Date | null {
  const now = expect.now.getTime();
  if (!issuedAt || Number.isNaN(issuedAt.getTime()))
    throw new AppError('sign_in_message_invalid', { message: 'Issued At is missing or malformed.' });
  if (expiration && Number.isNaN(expiration.getTime()))
    throw new AppError('sign_in_message_invalid', { message: 'Expiration Time is malformed.' });
  if (notBefore && Number.isNaN(notBefore.getTime()))
    throw new AppError('sign_in_message_invalid', { message: 'Not Before is malformed.' });
  if (issuedAt.getTime() > now + CLOCK_SKEW_MS)
    throw new AppError('sign_in_expired', { message: 'Issued At is in the future.' });
  if (issuedAt.getTime() < now - expect.maxAgeSeconds * 1000)
    throw new AppError('sign_in_expired', { message: 'The message was issued too long ago.' });
  if (expiration && expiration.getTime() <= now)
    throw new AppError('sign_in_expired', { message: 'The message has expired.' });
  if (notBefore && notBefore.getTime() > now + CLOCK_SKEW_MS)
    throw new AppError('sign_in_expired', { message: 'The message is not valid yet.' });
  return expiration ?? null;
}

export function checkOrigin(domain: string | undefined, uri: string | undefined, expect: SignInExpectations): void {
  const origin = new URL(expect.publicUrl);
  if (domain !== origin.host)
    throw new AppError('sign_in_domain_mismatch', { fields: { expected_domain: origin.host } });
  let uriOrigin: string | undefined;
  try {
    uriOrigin = uri ? new URL(uri).origin : undefined;
  } catch {
    uriOrigin = undefined;
  }
  if (uriOrigin !== origin.origin)
    throw new AppError('sign_in_domain_mismatch', {
      message: 'The URI is not on this server.',
      fields: { expected_origin: origin.origin },
    });
}

export async function verifySiwe(
  message: string,
  signature: string,
  expect: SignInExpectations,
): Promise<VerifiedSignIn> {
  let fields: ReturnType<typeof parseSiweMessage>;
  try {
    fields = parseSiweMessage(message);
  } catch {
    throw new AppError('sign_in_message_invalid');
  }
  if (!fields.address || !fields.nonce || fields.version !== '1' || fields.chainId === undefined)
    throw new AppError('sign_in_message_invalid');
  if (!expect.evmChainIds.includes(fields.chainId))
    throw new AppError('sign_in_chain_not_supported', {
      fields: { chain_id: fields.chainId, supported: expect.evmChainIds },
    });
  checkOrigin(fields.domain, fields.uri, expect);
  const expiresAt = checkTimes(fields.issuedAt, fields.expirationTime, fields.notBefore, expect);
  if (!validateSiweMessage({ message: fields, domain: new URL(expect.publicUrl).host, time: expect.now }))
    throw new AppError('sign_in_expired');
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new AppError('sign_in_signature_invalid');
  const ok = await verifyMessage({ address: fields.address, message, signature: signature as Hex }).catch(() => false);
  if (!ok) throw new AppError('sign_in_signature_invalid');
  return { chain: 'evm', address: getAddress(fields.address), nonce: fields.nonce, expiresAt };
}
