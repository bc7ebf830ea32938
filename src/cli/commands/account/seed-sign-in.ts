/**
 * `xx init`'s sign-in with the seed, by `--chain`: `base` signs in with SIWE (Base key m/44'/60'/0'/0/0);
 * `both` signs in with SIWE and attaches a Sign In With Solana attestation of the same seed's Solana key
 * (m/44'/501'/0'/0', ./hd-addresses.ts) over the same nonce, so the server links that Solana address to the
 * account (one seed, one account); `solana` signs in with SIWS alone, and lands in the account its address is
 * linked to (a new one when it is linked to none). The SIWS text is made by `@solana/wallet-standard-util`
 * and signed with @noble/curves ed25519.
 *
 * Defends: a signature good elsewhere — each message names `--server`'s host and URI and a nonce that server
 * issued for this one sign-in. The private keys live only inside this call.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { createSiweMessage } from 'viem/siwe';
import {
  identityNonceSchema,
  sessionGrantSchema,
  type SessionGrant,
} from '../../../shared/api-responses/identity-responses.js';
import { ApiClient } from '../../core/api-client.js';
import { CliError } from '../../core/cli-error.js';
import { evmAccount, solanaKey, type ChainChoice } from './hd-addresses.js';

const STATEMENT = 'Sign in to Treasury from the xx CLI.';

/** What POST /v1/identity/init answers (src/shared/api-responses/identity-responses.ts). */
export type SignInGrant = SessionGrant;

/** Which sign-in was used: SIWE, SIWE with the Solana address linked, or SIWS. */
export type SignInMethod = 'siwe' | 'siwe+siws' | 'siws';

/** A SIWS attestation of the seed's Solana key for `server`, over `nonce`. */
export function siwsAttestation(
  server: URL,
  mnemonic: string,
  nonce: string,
): { message: string; signature: string; public_key: string } {
  const { secretKey, publicKey } = solanaKey(mnemonic);
  const address = base58.encode(publicKey);
  const message = createSignInMessageText({
    domain: server.host,
    address,
    statement: STATEMENT,
    uri: server.origin,
    version: '1',
    chainId: 'mainnet',
    nonce,
    issuedAt: new Date().toISOString(),
  });
  const signature = ed25519.sign(new TextEncoder().encode(message), secretKey);
  return { message, signature: base58.encode(signature), public_key: address };
}

/** Signs in to `server` with the seed as `chain` asks: the session grant and which sign-in it was. */
export async function seedSignIn(
  server: URL,
  mnemonic: string,
  chain: ChainChoice,
): Promise<{ grant: SignInGrant; method: SignInMethod }> {
  const api = new ApiClient({ baseUrl: server.origin, token: undefined });
  const { nonce } = await api.request('POST', '/v1/identity/nonce', { reply: identityNonceSchema });
  let body: Record<string, unknown>;
  if (chain === 'solana') {
    body = { chain: 'solana', ...siwsAttestation(server, mnemonic, nonce) };
  } else {
    const signer = evmAccount(mnemonic);
    const message = createSiweMessage({
      domain: server.host,
      address: signer.address,
      uri: server.origin,
      version: '1',
      chainId: 84532,
      nonce,
      issuedAt: new Date(),
      statement: STATEMENT,
    });
    body = {
      chain: 'evm',
      message,
      signature: await signer.signMessage({ message }),
      ...(chain === 'both' ? { link_solana: siwsAttestation(server, mnemonic, nonce) } : {}),
    };
  }
  const grant = await api
    .request('POST', '/v1/identity/init', { body, reply: sessionGrantSchema })
    .catch((err: unknown) => {
      if (err instanceof CliError && err.code === 'identity_already_linked')
        throw new CliError({
          code: err.code,
          userMessage: `${err.userMessage} This seed's Base and Solana keys already sign in to two different accounts; sign in with one of them: \`xx init --chain base\` or \`xx init --chain solana\`.`,
          status: err.status,
          details: err.details,
          cause: err,
        });
      throw err;
    });
  return { grant, method: chain === 'solana' ? 'siws' : chain === 'both' ? 'siwe+siws' : 'siwe' };
}
