/**
 * `xx init`: onboarding in one command — the seed (new, restored, or the one already in the keystore),
 * the Base and Solana addresses, sign-in against `--server` (the message names that server's host, so
 * a signature cannot be replayed elsewhere: SIWE for `--chain base`, SIWE with the Solana key linked for
 * `both`, Sign In With Solana for `solana` — ./seed-sign-in.ts), an agent PAT (waiting out its propagation), a Treasury-managed
 * wallet for the agent, and the local records that make it the active agent. The sign-in session is used
 * in memory and logged out; the session file holds a session exchanged from the new agent PAT.
 * The PAT and a wallet init creates get limits by default, shown in the output (./init-defaults.ts): the
 * PAT a daily cap, the wallet a policy, which the sign-in session sets (an agent PAT may not).
 *
 * The seed is written only into the encrypted keystore and never printed here (`xx wallet export` shows it
 * on explicit request). The passphrase comes from a hidden prompt or XX_KEYSTORE_PASSPHRASE; a restored
 * phrase from a hidden prompt or XX_MNEMONIC.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createdPatSchema } from '../../../shared/api-responses/pat-responses.js';
import { sessionGrantSchema } from '../../../shared/api-responses/identity-responses.js';
import { ownerPolicySchema, type OwnerPolicy } from '../../../shared/api-responses/pay-responses.js';
import { agentPageSchema, agentViewSchema, walletViewSchema } from '../../../shared/api-responses/wallet-responses.js';
import { ApiClient } from '../../core/api-client.js';
import { agentWithEveryWallet } from '../../core/agent-wallets.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import {
  listAgents,
  loadAgent,
  loadCredentials,
  managedWalletSchema,
  saveAgent,
  saveCredentials,
  saveSession,
  setActiveAgent,
  type AgentRecord,
  type ManagedWallet,
} from '../../core/cli-state.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { readJsonFile, writeSecretJson } from '../../core/secret-file.js';
import { badArgument } from '../seller/seller-kit.js';
import { describePolicy, initLimits, type InitLimitOptions } from './init-defaults.js';
import { addressesFor, checkMnemonic, evmAccount, newMnemonic, type ChainChoice } from './hd-addresses.js';
import { ownerPolicyLines, signInitPolicy, type PolicySigningFailure } from './init-signed-policy.js';
import { keystoreSchema, openMnemonic, sealMnemonic } from './seed-keystore.js';
import { keystorePath, passphraseFor } from './owner-sign-in.js';
import { seedSignIn, type SignInGrant, type SignInMethod } from './seed-sign-in.js';

export { keystorePath, passphraseFor } from './owner-sign-in.js';

// `owner_policy` optional: a server without owner-signed policies still onboards.
const walletPolicyReplySchema = z.object({
  policy: z.record(z.string(), z.unknown()),
  owner_policy: ownerPolicySchema.optional(),
});

export interface InitOptions extends InitLimitOptions {
  server?: string;
  chain?: string;
  label?: string;
  restore?: boolean;
  newSeed?: boolean;
  words?: string;
  profile?: string;
}

const SIGN_IN_NAMES: Record<SignInMethod, string> = {
  siwe: 'SIWE (Base key)',
  'siwe+siws': 'SIWE (Base key), Solana address linked by SIWS',
  siws: 'SIWS (Solana key)',
};

function serverUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badArgument('--server', `expected an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badArgument('--server', `expected an http(s) URL, got "${raw}"`);
  return url;
}

/** A brand-new PAT may answer 401 until the auth cache catches up (docs/cli.md, `init`): retry with backoff, ~10 s. */
export async function waitForPat(client: ApiClient): Promise<void> {
  let delay = 250;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.request('GET', '/v1/auth/whoami');
      return;
    } catch (err) {
      if (!(err instanceof CliError) || err.status !== 401 || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

async function loadOrCreateSeed(
  ctx: CliContext,
  opts: InitOptions,
  chain: ChainChoice,
): Promise<{ mnemonic: string; keystore: string; created: boolean }> {
  const file = keystorePath(ctx, 'default');
  const existing = readJsonFile(file, keystoreSchema);
  if (existing && !opts.newSeed && !opts.restore) {
    const mnemonic = await openMnemonic(existing, await passphraseFor(ctx, 'Keystore passphrase'));
    return { mnemonic, keystore: file, created: false };
  }
  const mnemonic = opts.restore
    ? checkMnemonic(
        process.env.XX_MNEMONIC ||
          (await ctx.prompt.password({ message: 'Recovery phrase (12 or 24 words)', flag: 'XX_MNEMONIC' })),
      )
    : newMnemonic(opts.words === '12' ? 12 : 24);
  const passphrase = await passphraseFor(ctx, 'New keystore passphrase (8+ characters)');
  if (!process.env.XX_KEYSTORE_PASSPHRASE && ctx.interactive) {
    const again = await ctx.prompt.password({ message: 'Repeat the passphrase', flag: 'XX_KEYSTORE_PASSPHRASE' });
    if (again !== passphrase)
      throw new CliError({ code: 'passphrase_mismatch', userMessage: 'The passphrases differ.', exitCode: 2 });
  }
  const sealed = await ctx.spin('Encrypting the keystore', () =>
    sealMnemonic(mnemonic, passphrase, 'default', addressesFor(mnemonic, chain)),
  );
  if (existing) fs.renameSync(file, path.join(path.dirname(file), `default.${Date.now()}.replaced.json`)); // never destroy a seed silently
  writeSecretJson(file, sealed);
  return { mnemonic, keystore: file, created: true };
}

function parseReply<S extends z.ZodType>(schema: S, what: string, reply: unknown): z.output<S> {
  const parsed = schema.safeParse(reply);
  if (!parsed.success)
    throw new CliError({
      code: 'invalid_reply',
      userMessage: `${what} answered an unexpected shape; is --server a Treasury?`,
    });
  return parsed.data;
}

/**
 * The agent `init` works for. A first sign-in created the account with one agent: that one. On an existing
 * account an explicit `--label` picks the agent with that label — in a local record of this account, else
 * on the platform — or spawns a new one (POST /v1/agents); without `--label`, the account's first agent.
 */
async function chooseAgent(
  ctx: CliContext,
  session: ApiClient,
  grant: { account_id: string; agent_id: string; created: boolean },
  label: string | undefined,
): Promise<{ agentId: string; spawned: boolean }> {
  if (grant.created || label === undefined) return { agentId: grant.agent_id, spawned: false };
  const local = listAgents(ctx.paths).find(
    (a) => a.account_id === grant.account_id && a.server === session.baseUrl && a.label === label,
  );
  if (local) return { agentId: local.agent_id, spawned: false };
  const { agents } = await readEveryPage(session, '/v1/agents', 'agents', { page: agentPageSchema });
  const named = agents.find((a) => a.label === label);
  if (named) return { agentId: named.agent_id, spawned: false };
  const spawned = await session.request('POST', '/v1/agents', { body: { label }, reply: agentViewSchema });
  return { agentId: spawned.agent_id, spawned: true };
}

export async function init(ctx: CliContext, opts: InitOptions): Promise<void> {
  const chain = (opts.chain ?? 'both') as ChainChoice;
  if (!['base', 'solana', 'both'].includes(chain)) throw badArgument('--chain', 'one of base, solana, both');
  if (opts.words !== undefined && opts.words !== '12' && opts.words !== '24') throw badArgument('--words', '12 or 24');
  if (opts.restore && opts.newSeed) throw badArgument('--restore', 'cannot be combined with --new-seed');
  const server = serverUrl(opts.server ?? ctx.apiUrl());
  const base = server.origin;
  const label = opts.label ?? 'agent';
  const limits = initLimits(opts);

  const seed = await loadOrCreateSeed(ctx, opts, chain);
  const addresses = addressesFor(seed.mnemonic, chain);
  // Sign-in as --chain says (./seed-sign-in.ts): SIWE with the Base key (m/44'/60'/0'/0/0), with `both` also a
  // SIWS attestation linking the Solana key (m/44'/501'/0'/0') to the account; `solana`, SIWS alone. The
  // sign-in session is the owner's and is kept in memory only, logged out at the end; the session file gets
  // one exchanged from the agent PAT, which acts as that agent and cannot change caps or mint PATs.
  const { grant, method } = await ctx.spin('Signing in', () => seedSignIn(server, seed.mnemonic, chain));
  // The session names the account's first agent; `--label` may pick (or spawn) another one below.
  const session = new ApiClient({ baseUrl: base, token: grant.session });
  try {
    await finishInit(ctx, opts, { base, label, chain, seed, addresses, grant, method, session, limits });
  } finally {
    await session.request('POST', '/v1/auth/logout').catch(() => undefined);
  }
}

async function finishInit(
  ctx: CliContext,
  opts: InitOptions,
  run: {
    base: string;
    label: string;
    chain: ChainChoice;
    seed: { mnemonic: string; keystore: string; created: boolean };
    addresses: ReturnType<typeof addressesFor>;
    grant: SignInGrant;
    method: SignInMethod;
    session: ApiClient;
    limits: ReturnType<typeof initLimits>;
  },
): Promise<void> {
  const { base, label, chain, seed, addresses, grant, method, session, limits } = run;
  const { agentId, spawned } = await ctx.spin('Choosing the agent', () => chooseAgent(ctx, session, grant, opts.label));

  const { pat, agentClient } = await mintAgentPat(ctx, session, { base, label, agentId, limits });

  const previous = loadAgent(ctx.paths, agentId);
  // The agent's wallets as the platform knows them (another machine, or a restore, may have made some).
  const remote = await ctx.spin('Loading the agent', () => agentWithEveryWallet(agentClient, agentId));
  const { wallets, walletPolicy, walletPolicyApplied, ownerPolicy, signingFailure } = await agentWallets(ctx, {
    session,
    agentClient,
    agentId,
    chain,
    label,
    limits,
    seed,
    wallets: remote.wallets,
  });
  const record: AgentRecord = {
    agent_id: agentId,
    account_id: grant.account_id,
    label,
    server: base,
    pat: pat.pat,
    pat_id: pat.id,
    addresses,
    keystore: seed.keystore,
    wallets,
    created_at: previous?.created_at ?? new Date().toISOString(),
  };
  saveAgent(ctx.paths, record);
  setActiveAgent(ctx.paths, record.agent_id);
  const credentials = loadCredentials(ctx.paths);
  const profile = opts.profile ?? 'default';
  credentials.profiles[profile] = { token: pat.pat, server: base, label, added_at: new Date().toISOString() };
  credentials.active = profile;
  saveCredentials(ctx.paths, credentials);

  const data = {
    account_id: grant.account_id,
    agent_id: agentId,
    agent_spawned: spawned,
    server: base,
    sign_in: method,
    addresses,
    wallets,
    pat_id: pat.id,
    pat_daily_cap_usd: pat.daily_cap_usd ?? null,
    wallet_policy: walletPolicy,
    wallet_policy_applied: walletPolicyApplied,
    wallet_owner_policy: ownerPolicy,
    wallet_policy_signing_error: signingFailure,
    keystore: seed.keystore,
    seed_created: seed.created,
    account_created: grant.created,
    previous_pat_id: previous && previous.pat_id !== pat.id ? previous.pat_id : null,
  };
  const lines = initSummary(data, { base, label, method, seed, walletPolicy });
  ctx.out(data, lines.join('\n'));
}

type InitRun = Parameters<typeof finishInit>[2];

/** Mints the agent's PAT (its daily cap from the options), waits until it works, and saves a session exchanged for it. */
async function mintAgentPat(
  ctx: CliContext,
  session: ApiClient,
  { base, label, agentId, limits }: Pick<InitRun, 'base' | 'label' | 'limits'> & { agentId: string },
) {
  const pat = await ctx
    .spin('Minting the agent PAT', () =>
      session.request('POST', '/v1/pats', {
        body: {
          scope_type: 'agent',
          scope_id: agentId,
          label: `xx cli: ${label}`.slice(0, 128),
          ...(limits.patDailyCapUsd ? { daily_cap_usd: limits.patDailyCapUsd } : {}),
        },
      }),
    )
    .then((reply) => parseReply(createdPatSchema, 'POST /v1/pats', reply));
  const agentClient = new ApiClient({ baseUrl: base, token: pat.pat });
  await ctx.spin('Waiting for the PAT to propagate', () => waitForPat(agentClient));
  const exchanged = parseReply(
    sessionGrantSchema,
    'POST /v1/identity/exchange-pat',
    await agentClient.request('POST', '/v1/identity/exchange-pat'),
  );
  saveSession(ctx.paths, {
    session: exchanged.session,
    account_id: exchanged.account_id,
    agent_id: exchanged.agent_id,
    expires_at: exchanged.expires_at,
    server: base,
  });
  return { pat, agentClient };
}

/** The agent's wallets: the managed wallet created (with the wallet policy) when it has none, and the first one's policy. */
async function agentWallets(
  ctx: CliContext,
  run: Pick<InitRun, 'session' | 'chain' | 'label' | 'limits' | 'seed'> & {
    agentClient: ApiClient;
    agentId: string;
    wallets: ManagedWallet[];
  },
) {
  const { session, agentClient, agentId, chain, label, limits } = run;
  let wallets: ManagedWallet[] = run.wallets;
  let walletPolicy: Record<string, unknown> | null = null;
  let walletPolicyApplied = false;
  let signingFailure: PolicySigningFailure | null = null;
  if (chain !== 'solana' && wallets.length === 0) {
    // The account session creates it: only the owner sets a wallet policy.
    const created = await ctx.spin('Creating the managed wallet', async () =>
      parseReply(
        walletViewSchema,
        `POST /v1/agents/${agentId}/wallets`,
        await session.request('POST', `/v1/agents/${agentId}/wallets`, {
          body: { label, policy: limits.walletPolicy },
        }),
      ),
    );
    wallets = [managedWalletSchema.parse(created)];
    walletPolicyApplied = true;
    // Version 1 of its policy, signed by the seed's Base key (./init-signed-policy.ts); a refusal is reported.
    const signer = evmAccount(run.seed.mnemonic);
    signingFailure = await signInitPolicy(ctx, session, signer, created, limits.walletPolicy);
  }
  let ownerPolicy: OwnerPolicy | null = null;
  if (wallets.length > 0) {
    const first = wallets[0]!;
    const held = await ctx.spin('Reading the wallet policy', async () =>
      parseReply(
        walletPolicyReplySchema,
        `GET /v1/wallets/${first.id}/policy`,
        await agentClient.request('GET', `/v1/wallets/${first.id}/policy`),
      ),
    );
    walletPolicy = held.policy;
    ownerPolicy = held.owner_policy ?? null;
  }
  return { wallets, walletPolicy, walletPolicyApplied, ownerPolicy, signingFailure };
}

/** What `xx init` tells a person (the JSON output is `data` itself). */
function initSummary(
  data: {
    account_id: string;
    agent_id: string;
    agent_spawned: boolean;
    addresses: InitRun['addresses'];
    wallets: ManagedWallet[];
    pat_id: string;
    pat_daily_cap_usd: string | null;
    wallet_policy_applied: boolean;
    wallet_owner_policy: OwnerPolicy | null;
    wallet_policy_signing_error: PolicySigningFailure | null;
    previous_pat_id: string | null;
  },
  {
    base,
    label,
    method,
    seed,
    walletPolicy,
  }: Pick<InitRun, 'base' | 'label' | 'method' | 'seed'> & {
    walletPolicy: Record<string, unknown> | null;
  },
): string[] {
  const { addresses, wallets } = data;
  return [
    `Signed in to ${base} as ${data.account_id} with ${SIGN_IN_NAMES[method]}; agent ${data.agent_id} (${label}) is active${data.agent_spawned ? ' (spawned now)' : ''}.`,
    ...(addresses.base ? [`Base address:   ${addresses.base}`] : []),
    ...(addresses.solana ? [`Solana address: ${addresses.solana}`] : []),
    ...wallets.map((w) => `Managed wallet: ${w.id} ${w.address} (${w.network})`),
    `Seed: ${seed.created ? 'new, ' : ''}encrypted in ${seed.keystore} (back it up with \`xx wallet export\`).`,
    `Agent PAT ${data.pat_id} saved (0600), daily cap ${data.pat_daily_cap_usd === null ? 'none' : `${data.pat_daily_cap_usd} USD`} (change: \`xx pat update ${data.pat_id} --daily-cap <usd|none>\`).`,
    ...(walletPolicy
      ? [
          `Wallet policy: ${describePolicy(walletPolicy)}${data.wallet_policy_applied ? ' (set now; at init: --max-per-payment, --daily-limit, --policy <file>)' : ' (existing wallet, unchanged)'}.`,
        ]
      : []),
    ...ownerPolicyLines(wallets[0]?.id, data.wallet_owner_policy, data.wallet_policy_signing_error),
    'Next: `xx fund --testnet`, then `xx buy <url>`.',
    ...(data.previous_pat_id
      ? [
          `The previous agent PAT ${data.previous_pat_id} still works; \`xx pat revoke ${data.previous_pat_id}\` if nothing else uses it.`,
        ]
      : []),
  ];
}
