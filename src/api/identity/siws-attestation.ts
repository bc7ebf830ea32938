/**
 * Sign In With Solana (SIWS, the Solana wallet-standard sign-in message): an attestation is the message text,
 * its ed25519 signature (base58, 64 bytes) and the signer's public key (base58, 32 bytes). The message is
 * parsed, re-created and verified with `@solana/wallet-standard-util` (parseSignInMessage,
 * createSignInMessageText, verifySignIn) — no parser or signature code of our own. verifySignIn checks the
 * signature with @noble/curves' lenient (ZIP-215) defaults, so the same signature over the same message bytes
 * must also pass the strict RFC 8032 check (../../shared/verify-ed25519-strict.ts); both must hold.
 *
 * Defends, as SIWE does (./sign-in-message.ts, whose origin and time checks it shares): a message for
 * another domain or URI, issued too long ago or in the future, expired, not valid yet; a signature by another
 * key than `public_key`, or a message naming another address than `public_key`; a chain id that is no Solana
 * cluster; a message that is not in the canonical layout (what parses must re-create byte for byte, so no
 * two texts verify as one); a sign-in as an address nobody holds the key of (a small-order public key such as
 * the all-zero address, for which a signature anyone can make verifies any message under ZIP-215 rules).
 * Malformed timestamps are refused, not ignored. The message's Expiration Time is returned: the session it
 * signs in ends no later (identity-service.ts).
 * Does not defend: nonce freshness and single use — the caller consumes the nonce (identity-service.ts).
 */
import { base58 } from '@scure/base';
import { createSignInMessageText, parseSignInMessage, verifySignIn } from '@solana/wallet-standard-util';
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { verifyEd25519Strict } from '../../shared/verify-ed25519-strict.js';
import type { SiwsAttestation } from './sign-in-body.js';
import { checkOrigin, checkTimes, type SignInExpectations, type VerifiedSignIn } from './sign-in-message.js';

/**
 * Chain ids a SIWS message may name: the wallet-standard cluster names (bare, as wallets write them, or
 * `solana:` prefixed) and the CAIP-2 ids (genesis hashes) of mainnet, devnet and testnet. The sign-in proves
 * a key, not a cluster; any of these is the same key.
 */
const SOLANA_CHAIN_IDS: ReadonlySet<string> = new Set([
  'mainnet',
  'devnet',
  'testnet',
  'localnet',
  'solana:mainnet',
  'solana:devnet',
  'solana:testnet',
  'solana:localnet',
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z',
]);

const isoTimestamp = z.iso.datetime({ offset: true });

/** An RFC 3339 timestamp of the message, or undefined when absent; a malformed one is `sign_in_message_invalid`. */
function timestamp(value: string | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  if (!isoTimestamp.safeParse(value).success)
    throw new AppError('sign_in_message_invalid', { message: `${field} is not an RFC 3339 timestamp.` });
  return new Date(value);
}

function decodeBase58(value: string, bytes: number): Uint8Array {
  let decoded: Uint8Array;
  try {
    decoded = base58.decode(value);
  } catch {
    throw new AppError('sign_in_signature_invalid');
  }
  if (decoded.length !== bytes) throw new AppError('sign_in_signature_invalid');
  return decoded;
}

export function verifySiws(attestation: SiwsAttestation, expect: SignInExpectations): VerifiedSignIn {
  const signedMessage = new TextEncoder().encode(attestation.message);
  const parsed = parseSignInMessage(signedMessage);
  if (!parsed) throw new AppError('sign_in_message_invalid');
  if (createSignInMessageText(parsed) !== attestation.message)
    throw new AppError('sign_in_message_invalid', { message: 'The SIWS message is not in the canonical layout.' });
  if (!parsed.nonce || parsed.version !== '1') throw new AppError('sign_in_message_invalid');
  if (parsed.chainId !== undefined && !SOLANA_CHAIN_IDS.has(parsed.chainId))
    throw new AppError('sign_in_chain_not_supported', {
      fields: { chain_id: parsed.chainId.slice(0, 64), supported: [...SOLANA_CHAIN_IDS] },
    });
  checkOrigin(parsed.domain, parsed.uri, expect);
  const expiresAt = checkTimes(
    timestamp(parsed.issuedAt, 'Issued At'),
    timestamp(parsed.expirationTime, 'Expiration Time'),
    timestamp(parsed.notBefore, 'Not Before'),
    expect,
  );
  if (parsed.address !== attestation.public_key)
    throw new AppError('sign_in_signature_invalid', {
      message: 'The SIWS message names another address than public_key.',
    });
  const publicKey = decodeBase58(attestation.public_key, 32);
  const signature = decodeBase58(attestation.signature, 64);
  let ok: boolean;
  try {
    // Every field we expect, as checked above; the library checks they are the message's and the signature.
    ok = verifySignIn(
      { ...parsed, domain: new URL(expect.publicUrl).host, address: attestation.public_key, version: '1' },
      {
        account: { address: attestation.public_key, publicKey, chains: [], features: [] },
        signedMessage,
        signature,
      },
    );
  } catch {
    ok = false;
  }
  // The library's check is ZIP-215 (a small-order key verifies anything): the strict check of the same bytes too.
  if (!ok || !verifyEd25519Strict(signature, signedMessage, publicKey)) throw new AppError('sign_in_signature_invalid');
  return { chain: 'solana', address: attestation.public_key, nonce: parsed.nonce, expiresAt };
}
