/**
 * The owner's proof for money-control commands (`pat list|create|update|revoke`, `dashboard`, `service init`,
 * `service pat …`, `service payouts --flush`) and for reading the account's sellers (`service list --remote`): a
 * fresh sign-in with the seed in the encrypted keystore (SIWE with the Base key, the Solana key's SIWS
 * attestation attached: ./seed-sign-in.ts), opened with its passphrase (a hidden prompt on a terminal, or
 * XX_KEYSTORE_PASSPHRASE). The session it yields lives only in memory for that one command and is logged out
 * after it; it is never written to the session file, which holds only sessions exchanged from the agent PAT.
 *
 * Defends: an agent that can read the CLI's files (its PAT, the session file) still cannot change caps, mint
 * PATs or read the account's sellers — the server refuses exchanged sessions there (`fresh_sign_in_required`),
 * and a sign-in needs the seed. Does not defend: an agent given the keystore passphrase (XX_KEYSTORE_PASSPHRASE
 * in its environment) — that is the owner's own key handed over.
 */
import path from 'node:path';
import { base58 } from '@scure/base';
import { ApiClient } from '../../core/api-client.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { loadActiveAgent } from '../../core/cli-state.js';
import { readJsonFile } from '../../core/secret-file.js';
import { badArgument } from '../seller/seller-kit.js';
import { evmAccount, solanaKey } from './hd-addresses.js';
import type { PolicyKeys } from './owner-signed-policy.js';
import { keystoreSchema, openMnemonic } from './seed-keystore.js';
import { seedSignIn, type SignInGrant } from './seed-sign-in.js';

/** The seed's keys an owner command may sign with (the Base key, the Solana key). */
export type OwnerSeedKeys = Required<PolicyKeys>;

export async function passphraseFor(ctx: CliContext, message: string): Promise<string> {
  return process.env.XX_KEYSTORE_PASSPHRASE || ctx.prompt.password({ message, flag: 'XX_KEYSTORE_PASSPHRASE' });
}

export function keystorePath(ctx: CliContext, name: string): string {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) throw badArgument('--name', 'lower-case letters, digits, - and _');
  return path.join(ctx.paths.seedsDir, `${name}.json`);
}

/**
 * Runs `fn` with a client bearing a fresh sign-in session of the owner, then logs that session out. The
 * server is the active agent's (else the API URL), the keystore the active agent's (else `default`).
 */
export async function withOwnerSession<T>(
  ctx: CliContext,
  why: string,
  fn: (owner: ApiClient, grant: SignInGrant, seed: OwnerSeedKeys) => Promise<T>,
): Promise<T> {
  let agent: { server: string; keystore?: string | undefined; account_id: string } | undefined;
  try {
    agent = loadActiveAgent(ctx.paths);
  } catch {
    agent = undefined;
  }
  const file = agent?.keystore ?? keystorePath(ctx, 'default');
  const keystore = readJsonFile(file, keystoreSchema);
  if (!keystore) {
    throw ctx.missingSession(
      `${why} needs the owner to sign in again with the seed, and there is no keystore at ${file}. Run \`xx init\` (or \`xx init --restore\`) first.`,
    );
  }
  const mnemonic = await openMnemonic(
    keystore,
    await passphraseFor(ctx, `Keystore passphrase (${why} signs in again)`),
  );
  const server = new URL(process.env.XX_API_URL || agent?.server || ctx.apiUrl());
  // As `xx init` does by default (SIWE with the Solana key linked): an account made by `--chain solana` is reached too.
  const { grant } = await ctx.spin('Signing in', () => seedSignIn(server, mnemonic, 'both'));
  const owner = new ApiClient({ baseUrl: server.origin, token: grant.session });
  try {
    if (agent && grant.account_id !== agent.account_id) {
      throw new CliError({
        code: 'account_mismatch',
        userMessage: `The keystore signs in to ${grant.account_id}, not to the active agent's account ${agent.account_id}.`,
      });
    }
    // The seed's Base key (the one the owner signs in with) signs the owner's documents, its Solana key those of an
    // owner who signed in with Solana (./owner-signed-policy.ts).
    const solana = solanaKey(mnemonic);
    return await fn(owner, grant, {
      evm: evmAccount(mnemonic),
      solana: { address: base58.encode(solana.publicKey), secretKey: solana.secretKey },
    });
  } finally {
    await owner.request('POST', '/v1/auth/logout').catch(() => undefined);
  }
}
