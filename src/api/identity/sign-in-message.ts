/**
 * Sign-in attestations: SIWE (EIP-4361) for EVM, parsed and field-checked with viem's SIWE utilities and
 * verified with viem's `verifyMessage`; SIWS (the Solana sign-in text, same field layout) parsed here and
 * verified with @noble/curves ed25519. Returns the verified address and the message fields.
 *
 * Defends: messages for another domain or URI, expired or not-yet-valid messages, issued-at in the future,
 * bad signatures. Nonce freshness and single use are the caller's job (it must consume the nonce).
 * Does not defend: smart-contract wallets (ERC-1271/6492 need a chain call; EOAs only for now).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { AppError } from '../errors/app-error.js';

export interface VerifiedSignIn {
  chain: 'evm' | 'solana';
  /** Checksummed EVM address, or base58 Solana public key. */
  address: string;
  nonce: string;
}

export interface SignInExpectations {
  /** Our origin, e.g. http://127.0.0.1:8402: its host must be the domain and the URI must be on it. */
  publicUrl: string;
  /** EVM chain ids a SIWE message may name (the configured chains). */
  evmChainIds: readonly number[];
  now: Date;
  maxAgeSeconds: number;
}

const CLOCK_SKEW_MS = 60_000;

function checkTimes(
  issuedAt: Date | undefined,
  expiration: Date | undefined,
  notBefore: Date | undefined,
  expect: SignInExpectations,
): void {
  const now = expect.now.getTime();
  if (!issuedAt || Number.isNaN(issuedAt.getTime()))
    throw new AppError('sign_in_message_invalid', { message: 'Issued At is missing or malformed.' });
  if (issuedAt.getTime() > now + CLOCK_SKEW_MS)
    throw new AppError('sign_in_expired', { message: 'Issued At is in the future.' });
  if (issuedAt.getTime() < now - expect.maxAgeSeconds * 1000)
    throw new AppError('sign_in_expired', { message: 'The message was issued too long ago.' });
  if (expiration && expiration.getTime() <= now)
    throw new AppError('sign_in_expired', { message: 'The message has expired.' });
  if (notBefore && notBefore.getTime() > now + CLOCK_SKEW_MS)
    throw new AppError('sign_in_expired', { message: 'The message is not valid yet.' });
}

function checkOrigin(domain: string | undefined, uri: string | undefined, expect: SignInExpectations): void {
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
  checkTimes(fields.issuedAt, fields.expirationTime, fields.notBefore, expect);
  if (!validateSiweMessage({ message: fields, domain: new URL(expect.publicUrl).host, time: expect.now }))
    throw new AppError('sign_in_expired');
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new AppError('sign_in_signature_invalid');
  const ok = await verifyMessage({ address: fields.address, message, signature: signature as Hex }).catch(() => false);
  if (!ok) throw new AppError('sign_in_signature_invalid');
  return { chain: 'evm', address: getAddress(fields.address), nonce: fields.nonce };
}

const SIWS_HEADER =
  /^(?<domain>[^\s]+) wants you to sign in with your Solana account:\n(?<address>[1-9A-HJ-NP-Za-km-z]{32,44})\n/;

/** Parses the Solana sign-in text (CAIP-122 layout): header, address, optional statement, `Key: value` lines. */
export function parseSiws(message: string): { domain: string; address: string; fields: Record<string, string> } {
  const header = SIWS_HEADER.exec(message);
  if (!header?.groups) throw new AppError('sign_in_message_invalid');
  const fields: Record<string, string> = {};
  for (const line of message.slice(header[0].length).split('\n')) {
    const m = /^(URI|Version|Chain ID|Nonce|Issued At|Expiration Time|Not Before|Request ID): (.+)$/.exec(line);
    if (m) fields[m[1]!] = m[2]!;
  }
  return { domain: header.groups.domain!, address: header.groups.address!, fields };
}

export async function verifySiws(
  message: string,
  signature: string,
  expect: SignInExpectations,
): Promise<VerifiedSignIn> {
  const parsed = parseSiws(message);
  const nonce = parsed.fields.Nonce;
  if (!nonce || parsed.fields.Version !== '1') throw new AppError('sign_in_message_invalid');
  const chain = parsed.fields['Chain ID'];
  if (chain !== undefined && !/^(mainnet|devnet|testnet|localnet|solana:[1-9A-HJ-NP-Za-km-z]{32})$/.test(chain)) {
    throw new AppError('sign_in_chain_not_supported', { fields: { chain_id: chain } });
  }
  checkOrigin(parsed.domain, parsed.fields.URI, expect);
  const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));
  checkTimes(
    date(parsed.fields['Issued At']),
    date(parsed.fields['Expiration Time']),
    date(parsed.fields['Not Before']),
    expect,
  );
  let publicKey: Uint8Array;
  let sig: Uint8Array;
  try {
    publicKey = base58.decode(parsed.address);
    sig = base58.decode(signature);
  } catch {
    throw new AppError('sign_in_signature_invalid');
  }
  if (publicKey.length !== 32 || sig.length !== 64) throw new AppError('sign_in_signature_invalid');
  let ok = false;
  try {
    ok = ed25519.verify(sig, new TextEncoder().encode(message), publicKey);
  } catch {
    ok = false;
  }
  if (!ok) throw new AppError('sign_in_signature_invalid');
  return { chain: 'solana', address: parsed.address, nonce };
}
