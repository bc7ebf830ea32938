/**
 * The one place a buyer command (`buy`, `fund`, `agent`, `history`, `whoami`, `mcp`) finds its bearer, in this
 * order (docs/cli.md, "Credentials"): the `--profile <name>` flag, then `XX_PAT` in the environment, then the
 * active profile of the credentials file (`xx login`, `xx init`), then the active agent's record (`xx init`).
 * So a machine with only `XX_PAT` set — a CI job, an agent host, a container — or restored with the
 * `login_command` of the `reauthenticate` recovery runs every buyer command.
 *
 * Defends against: a malformed or removed-master-key `XX_PAT` being sent anywhere (refused before any I/O);
 * a `--profile` that does not exist silently falling back to another credential, or naming a key of the
 * object prototype (`constructor` is `profile_not_found`; a name outside PROFILE_NAME, such as `__proto__`, is
 * exit 2 naming the flag: ./profile-names.ts). The token is returned to the caller only; nothing here prints
 * or logs it. Does not check the token with the server (the first request does), nor decide which server a
 * token belongs to beyond its profile or agent record.
 */
import { CliError, REAUTHENTICATE_RECOVERY } from './cli-error.js';
import type { CliContext } from './cli-context.js';
import { listAgents, loadActiveAgent, loadCredentials, type AgentRecord } from './cli-state.js';
import { isMasterKey } from './legacy-master-key.js';
import { profileNameArgument, profileOf } from './profile-names.js';

/** What a PAT looks like (the same check `xx login` makes). */
export const PAT_SHAPE = /^xx_pat_[A-Za-z0-9_-]{16,200}$/;

/** Where the bearer came from, for `whoami` and error messages (never the token). */
export type BearerSource =
  | { kind: 'flag_profile'; profile: string }
  | { kind: 'env'; variable: 'XX_PAT' }
  | { kind: 'active_profile'; profile: string }
  | { kind: 'agent_record'; agent_id: string };

export interface BuyerBearer {
  token: string;
  /** The API base URL: `XX_API_URL` when set, else the profile's or agent's server (for XX_PAT: the configured URL). */
  server: string;
  source: BearerSource;
  /** The local agent record holding this very PAT, when there is one (its stored wallets, addresses, keystore). */
  agent: AgentRecord | undefined;
}

export interface BearerFlags {
  /** `--profile <name>`: a profile of the credentials file, which then must exist. */
  profile?: string | undefined;
}

/** The help text `xx --help` shows for the order above. */
export { CREDENTIALS_HELP } from './credentials-help.js';

export function describeSource(source: BearerSource): string {
  switch (source.kind) {
    case 'flag_profile':
      return `profile ${source.profile} (--profile)`;
    case 'env':
      return 'XX_PAT';
    case 'active_profile':
      return `profile ${source.profile}`;
    case 'agent_record':
      return `agent ${source.agent_id}`;
  }
}

function agentHolding(ctx: CliContext, token: string): AgentRecord | undefined {
  let active: AgentRecord | undefined;
  try {
    active = loadActiveAgent(ctx.paths);
  } catch {
    active = undefined;
  }
  if (active?.pat === token) return active;
  return listAgents(ctx.paths).find((a) => a.pat === token);
}

function checkEnvPat(raw: string): string {
  const token = raw.trim();
  if (PAT_SHAPE.test(token)) return token;
  if (isMasterKey(token))
    throw new CliError({
      code: 'master_key_removed',
      userMessage: 'XX_PAT holds a master key; master keys were removed. Mint an agent PAT with `xx pat create`.',
      recovery: { ...REAUTHENTICATE_RECOVERY },
    });
  throw new CliError({
    code: 'invalid_argument',
    userMessage: 'XX_PAT is not a PAT (expected xx_pat_…).',
    exitCode: 2,
    details: { variable: 'XX_PAT' },
  });
}

/** The bearer by the order above, or undefined when there is none at all. */
export function findBuyerBearer(
  ctx: CliContext,
  flags: BearerFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): BuyerBearer | undefined {
  const apiOverride = env.XX_API_URL?.replace(/\/+$/, '') || undefined;
  const withAgent = (token: string, server: string, source: BearerSource): BuyerBearer => ({
    token,
    server: (apiOverride ?? server).replace(/\/+$/, ''),
    source,
    agent: agentHolding(ctx, token),
  });
  if (flags.profile !== undefined) {
    const profile = profileOf(loadCredentials(ctx.paths), profileNameArgument(flags.profile));
    if (!profile)
      throw new CliError({
        code: 'profile_not_found',
        userMessage: `No profile named "${flags.profile}" (see \`xx profile list\`; add one with \`xx login --profile ${flags.profile}\`).`,
        exitCode: 2,
        details: { flag: '--profile' },
      });
    return withAgent(profile.token, profile.server, { kind: 'flag_profile', profile: flags.profile });
  }
  if (env.XX_PAT !== undefined && env.XX_PAT !== '')
    return withAgent(checkEnvPat(env.XX_PAT), ctx.apiUrl(), { kind: 'env', variable: 'XX_PAT' });
  const creds = loadCredentials(ctx.paths);
  const active = profileOf(creds, creds.active);
  if (active && creds.active)
    return withAgent(active.token, active.server, { kind: 'active_profile', profile: creds.active });
  let agent: AgentRecord;
  try {
    agent = loadActiveAgent(ctx.paths);
  } catch {
    return undefined;
  }
  return withAgent(agent.pat, agent.server, { kind: 'agent_record', agent_id: agent.agent_id });
}

/**
 * The bearer by the order above; none at all is `no_active_agent` (exit 1, the code buyer commands always
 * answered) with the reauthenticate recovery — or the master-key migration on a legacy machine.
 */
export function requireBuyerBearer(ctx: CliContext, flags: BearerFlags = {}): BuyerBearer {
  const found = findBuyerBearer(ctx, flags);
  if (found) return found;
  throw ctx.missingSession(
    'No agent credentials: pass --profile <name>, set XX_PAT to an agent PAT, pipe a PAT to `xx login --token -`, or run `xx init`.',
    'no_active_agent',
  );
}
