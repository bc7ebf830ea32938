/**
 * verifySiws on its own, with a fixed clock: what a wallet may add to a SIWS message (resources, a request id,
 * a `solana:` chain id, no statement) verifies, and its Expiration Time is returned; Issued At or Not Before
 * ahead of the clock, and an Issued At that is not a timestamp, are refused with the codes SIWE uses; a sign-in
 * as a small-order key (the identity point) with the signature anyone can make for it (R = identity, S = 0),
 * which the library's lenient check accepts, is refused as a bad signature.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { AppError } from '../../../src/api/errors/app-error.js';
import { verifySiws } from '../../../src/api/identity/siws-attestation.js';

const NOW = new Date('2026-11-26T12:00:00.000Z');
const expect = { publicUrl: 'https://treasury.example', evmChainIds: [84532], now: NOW, maxAgeSeconds: 600 };
const secret = ed25519.utils.randomSecretKey();
const address = base58.encode(ed25519.getPublicKey(secret));

function attest(fields: Partial<Parameters<typeof createSignInMessageText>[0]>) {
  const message = createSignInMessageText({
    domain: 'treasury.example',
    address: fields.address ?? address,
    uri: 'https://treasury.example/login',
    version: '1',
    nonce: 'n0nce1234',
    issuedAt: NOW.toISOString(),
    ...fields,
  });
  return {
    message,
    signature: base58.encode(ed25519.sign(new TextEncoder().encode(message), secret)),
    public_key: address,
  };
}

function refused(fields: Partial<Parameters<typeof createSignInMessageText>[0]>, code: string): void {
  assert.throws(
    () => verifySiws(attest(fields), expect),
    (err: unknown) => err instanceof AppError && err.code === code,
    JSON.stringify(fields),
  );
}

describe('verifySiws (Sign In With Solana attestations)', () => {
  it('verifies what wallets add: resources, a request id, a solana: chain id, no statement', () => {
    const verified = verifySiws(
      attest({
        chainId: 'solana:mainnet',
        requestId: 'req-1',
        resources: ['https://treasury.example/terms'],
        expirationTime: new Date(NOW.getTime() + 60_000).toISOString(),
      }),
      expect,
    );
    // Its Expiration Time comes out too: the session it signs in ends no later.
    assert.deepEqual(verified, {
      chain: 'solana',
      address,
      nonce: 'n0nce1234',
      expiresAt: new Date(NOW.getTime() + 60_000),
    });
  });

  it('refuses Issued At or Not Before ahead of the clock, and a timestamp that is not one', () => {
    refused({ issuedAt: new Date(NOW.getTime() + 5 * 60_000).toISOString() }, 'sign_in_expired');
    refused({ notBefore: new Date(NOW.getTime() + 5 * 60_000).toISOString() }, 'sign_in_expired');
    refused({ issuedAt: 'yesterday' }, 'sign_in_message_invalid');
    refused({ issuedAt: undefined }, 'sign_in_message_invalid');
    refused({ nonce: undefined }, 'sign_in_message_invalid');
    refused({ domain: 'treasury.example:8443' }, 'sign_in_domain_mismatch');
  });

  it('refuses a small-order key with the signature anyone can make for it (sign_in_signature_invalid)', () => {
    const identityPoint = '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM';
    const forged = '2AFv15MNPuA84RmU66xw2uMzGipcVxNpzAffoacGVvjFue3CBmf633fAWuiP9cwL9C3z3CJiGgRSFjJfeEcA6QX';
    const attestation = { ...attest({ address: identityPoint }), signature: forged, public_key: identityPoint };
    // What the library alone would accept: its check is ZIP-215, under which this verifies any message.
    const signedMessage = new TextEncoder().encode(attestation.message);
    assert.equal(ed25519.verify(base58.decode(forged), signedMessage, base58.decode(identityPoint)), true);
    assert.throws(
      () => verifySiws(attestation, expect),
      (err: unknown) => err instanceof AppError && err.code === 'sign_in_signature_invalid',
    );
  });
});
