/**
 * Tokens and identity: `login` (store a PAT profile, from stdin — `--token -` — or, with a warning, the flag:
 * ../../core/pat-input.ts; the name checked first: ../../core/profile-names.ts), `whoami`, `profile
 * {list,switch,delete}`, `pat {list,create,revoke}` and `dashboard` (a single-use PAT of the active agent,
 * minted within its PAT, handed in the URL fragment — which never reaches a server log — to the browser
 * that asked for it with the code /cli-handoff shows). PATs are printed only by `pat create`,
 * whose purpose that is, and by `dashboard` when no browser can be opened. The `pat` commands and
 * `dashboard` control money, so they sign the owner in again with the keystore's seed (owner-sign-in.ts);
 * `logout` ends the stored session.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { ApiClient } from '../../core/api-client.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { openInBrowser } from '../../core/open-browser.js';
import { readPatInput } from '../../core/pat-input.js';
import { findBuyerBearer, describeSource, type BearerFlags } from '../../core/buyer-bearer.js';
import { loadActiveAgent, loadCredentials, loadSession, saveCredentials } from '../../core/cli-state.js';
import { profileNameArgument, profileOf } from '../../core/profile-names.js';
import { readEveryPage } from '../../core/read-every-page.js';
import {
  loggedOutSchema,
  sessionsRevokedSchema,
  whoamiSchema,
  type Whoami,
} from '../../../shared/api-responses/identity-responses.js';
import { createdPatSchema, patPageSchema, patViewSchema } from '../../../shared/api-responses/pat-responses.js';
import { isMasterKey } from '../../core/legacy-master-key.js';
import { formatTable } from '../seller/seller-format.js';
import { act, badArgument, usdArgument, type ContextOf } from '../seller/seller-kit.js';
import type { withOwnerSession as WithOwnerSession } from './owner-sign-in.js';

// The sign-in code (viem, the keystore) loads only when a command needs the owner: whoami, login and profile
// start without it (docs/cli.md, "Start-up").
const withOwnerSession: typeof WithOwnerSession = async (...args) =>
  (await import('./owner-sign-in.js')).withOwnerSession(...args);

async function login(ctx: CliContext, opts: { token?: string; profile?: string; buyMax?: string }): Promise<void> {
  const buyMax = opts.buyMax === undefined ? undefined : usdArgument('--buy-max', opts.buyMax);
  const name = profileNameArgument(opts.profile ?? 'default'); // before the PAT is read or checked
  const input = await readPatInput(ctx, opts.token);
  const token = input.token;
  if (!/^xx_pat_[A-Za-z0-9_-]{16,200}$/.test(token)) {
    if (isMasterKey(token))
      throw new CliError({
        code: 'master_key_removed',
        userMessage: 'Master keys were removed on 2026-04-27. Run `xx init`, then mint PATs with `xx pat create`.',
      });
    throw badArgument('--token', 'expected a PAT (xx_pat_…)');
  }
  const server = ctx.apiUrl();
  const client = ctx.client(token, server);
  const who = await ctx.spin('Checking the PAT', async () => {
    await (await import('./init-command.js')).waitForPat(client);
    return client.request('GET', '/v1/auth/whoami', { reply: whoamiSchema });
  });
  const creds = loadCredentials(ctx.paths);
  creds.profiles[name] = {
    token,
    server,
    added_at: new Date().toISOString(),
    ...(buyMax ? { buy_max_usd: buyMax } : {}),
  };
  creds.active = name;
  saveCredentials(ctx.paths, creds);
  input.warnOnSuccess();
  ctx.out(
    { profile: name, server, buy_max_usd: buyMax ?? null, ...who },
    `Saved profile "${name}" (${who.scope_type} ${who.scope_id}) for ${server}${buyMax ? `; xx buy pays at most ${buyMax} USD a request unless --max says otherwise` : ''}.`,
  );
}

/**
 * The wallets of the agent a bearer acts as (an agent PAT, or a session's agent), each with whether its policy
 * is owner-signed (`policy_state`); undefined for a bearer of no agent.
 */
async function agentWalletStates(ctx: CliContext, client: ApiClient, who: Whoami) {
  const agentId = who.scope_type === 'agent' ? who.scope_id : 'agent_id' in who ? who.agent_id : undefined;
  if (!agentId) return undefined;
  const { agentWithEveryWallet } = await import('../../core/agent-wallets.js');
  const { wallets } = await ctx.spin('Loading its wallets', () => agentWithEveryWallet(client, agentId));
  return wallets.map((w) => ({ id: w.id, address: w.address, policy_state: w.policy_state ?? null }));
}

/** `--session`: the stored account session (exchanged from the active agent's PAT, renewed when stale), not a PAT. */
async function whoami(ctx: CliContext, flags: BearerFlags & { session?: boolean }): Promise<void> {
  if (flags.session && flags.profile !== undefined) throw badArgument('--session', 'not with --profile');
  const found = flags.session ? undefined : findBuyerBearer(ctx, flags);
  const bearer = found ? { ...found, source: describeSource(found.source) } : undefined;
  const client = bearer ? ctx.client(bearer.token, bearer.server) : await ctx.session();
  const who = await ctx.spin('Asking the platform', () =>
    client.request('GET', '/v1/auth/whoami', { reply: whoamiSchema }),
  );
  // A session says whether it is a sign-in (the owner) or exchanged from an agent PAT (acts as that agent).
  const origin = 'session_origin' in who ? who.session_origin : undefined;
  const session = origin
    ? { session_origin: origin, agent_id: ('agent_id' in who ? who.agent_id : undefined) ?? null }
    : {};
  const wallets = await agentWalletStates(ctx, client, who);
  const data = {
    auth_type: who.auth_type,
    scope_type: who.scope_type,
    scope_id: who.scope_id,
    ...session,
    // The API's word for every wallet the bearer reaches (owner_signed only when all are), then each one's.
    ...('policy_state' in who && who.policy_state ? { policy_state: who.policy_state } : {}),
    ...(wallets ? { wallets } : {}),
    source: bearer?.source ?? 'session',
    server: client.baseUrl,
  };
  ctx.out(
    data,
    [
      `auth_type:  ${who.auth_type}`,
      `scope_type: ${who.scope_type}`,
      `scope_id:   ${who.scope_id}`,
      ...(origin ? [`session:    ${origin}`] : []),
      ...(data.policy_state ? [`policies:   ${data.policy_state}`] : []),
      ...(wallets ?? []).map((w) => `wallet:     ${w.id} ${w.address} ${w.policy_state ?? ''}`.trimEnd()),
      `(${data.source} at ${data.server})`,
    ].join('\n'),
  );
}

function profiles(ctx: CliContext, action: 'list' | 'switch' | 'delete', name?: string): void {
  const creds = loadCredentials(ctx.paths);
  if (action === 'list') {
    const rows = Object.entries(creds.profiles).map(([n, p]) => ({
      name: n,
      server: p.server,
      active: creds.active === n,
      added_at: p.added_at,
    }));
    ctx.out(
      { profiles: rows },
      formatTable(
        ['', 'name', 'server', 'added'],
        rows.map((r) => [r.active ? '*' : '', r.name, r.server, r.added_at]),
        'No profiles. Add one with `xx login --token -` (the PAT on stdin).',
      ),
    );
    return;
  }
  if (!name) throw badArgument('<name>', 'a profile name is required');
  if (!profileOf(creds, name))
    throw new CliError({ code: 'profile_not_found', userMessage: `No profile named "${name}".` });
  if (action === 'switch') creds.active = name;
  else {
    delete creds.profiles[name];
    if (creds.active === name) delete creds.active;
  }
  saveCredentials(ctx.paths, creds);
  ctx.out(
    { profile: name, action, active: creds.active ?? null },
    action === 'switch' ? `Profile "${name}" is active.` : `Deleted profile "${name}".`,
  );
}

async function patList(ctx: CliContext): Promise<void> {
  const { pats } = await withOwnerSession(ctx, '`xx pat list`', (owner) =>
    ctx.spin('Listing PATs', () => readEveryPage(owner, '/v1/pats', 'pats', { page: patPageSchema })),
  );
  ctx.out(
    { pats },
    formatTable(
      ['id', 'scope', 'label', 'daily cap', 'created', 'state'],
      pats.map((p) => [
        p.id,
        `${p.scope_type} ${p.scope_id}`,
        p.label ?? '',
        p.daily_cap_usd ?? '',
        p.created_at,
        p.revoked_at ? 'revoked' : p.used_at && p.single_use ? 'used' : 'active',
      ]),
      'No PATs.',
    ),
  );
}

async function patCreate(
  ctx: CliContext,
  opts: { label?: string; scope?: string; dailyCap?: string; expiresIn?: string; gate?: boolean },
): Promise<void> {
  const scope = opts.scope ?? 'agent';
  if (!['agent', 'treasury', 'gate'].includes(scope))
    throw badArgument('--scope', 'agent, treasury or gate (service PATs: `xx service pat create`)');
  if (opts.gate && scope !== 'treasury')
    throw badArgument('--gate', 'goes with --scope treasury (or use --scope gate)');
  const expires = opts.expiresIn === undefined ? undefined : Number(opts.expiresIn);
  if (expires !== undefined && (!Number.isInteger(expires) || expires < 60))
    throw badArgument('--expires-in', 'seconds, at least 60');
  let scopeId: string | undefined;
  if (scope === 'agent') {
    try {
      scopeId = loadActiveAgent(ctx.paths).agent_id;
    } catch {
      scopeId = undefined;
    }
  }
  const body = {
    scope_type: scope,
    ...(scopeId ? { scope_id: scopeId } : {}),
    ...(opts.gate ? { gate: true } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...(opts.dailyCap ? { daily_cap_usd: usdArgument('--daily-cap', opts.dailyCap) } : {}),
    ...(expires ? { expires_in_seconds: expires } : {}),
  };
  const created = await withOwnerSession(ctx, '`xx pat create`', (owner) =>
    ctx.spin('Minting the PAT', () => owner.request('POST', '/v1/pats', { body, reply: createdPatSchema })),
  );
  ctx.out(
    created,
    `${created.pat}\n(${created.id}, ${created.scope_type} ${created.scope_id}; shown once — store it now)`,
  );
}

/** PATCH /v1/pats/{id}: an agent PAT's daily cap raised, lowered, or removed (`--daily-cap none`). */
async function patUpdate(ctx: CliContext, id: string, opts: { dailyCap?: string }): Promise<void> {
  if (!/^pat_[0-9a-f]{24}$/.test(id)) throw badArgument('<pat_id>', 'expected a PAT id (pat_…)');
  if (opts.dailyCap === undefined) throw badArgument('--daily-cap', 'a USD amount, or none to remove the cap');
  const cap = opts.dailyCap === 'none' ? null : usdArgument('--daily-cap', opts.dailyCap);
  const pat = await withOwnerSession(ctx, '`xx pat update`', (owner) =>
    ctx.spin('Updating', () =>
      owner.request('PATCH', `/v1/pats/${id}`, { body: { daily_cap_usd: cap }, reply: patViewSchema }),
    ),
  );
  ctx.out(
    pat,
    `${pat.id}: daily cap ${pat.daily_cap_usd === null || pat.daily_cap_usd === undefined ? 'none' : `${pat.daily_cap_usd} USD`}.`,
  );
}

async function patRevoke(ctx: CliContext, id: string): Promise<void> {
  if (!/^pat_[0-9a-f]{24}$/.test(id)) throw badArgument('<pat_id>', 'expected a PAT id (pat_…)');
  const pat = await withOwnerSession(ctx, '`xx pat revoke`', (owner) =>
    ctx.spin('Revoking', () => owner.request('DELETE', `/v1/pats/${id}`, { reply: patViewSchema })),
  );
  ctx.out(pat, `Revoked ${pat.id}.`);
}

/**
 * `xx logout`: ends the stored session on the server (POST /v1/auth/logout) and deletes the session file;
 * `--all` signs the owner in again and ends every session of the account (POST /v1/auth/sessions/revoke-all).
 * PATs are not touched: `xx pat revoke` ends one, with the sessions exchanged from it.
 */
async function logout(ctx: CliContext, opts: { all?: boolean }): Promise<void> {
  const record = loadSession(ctx.paths);
  let ended: string | null = null;
  if (record) {
    ended = await ctx
      .client(record.session, process.env.XX_API_URL || record.server)
      .request('POST', '/v1/auth/logout', { reply: loggedOutSchema })
      .then((r) => r.session_id)
      .catch((err: unknown) => {
        if (err instanceof CliError && (err.status === 401 || err.status === 403)) return null; // already over
        throw err;
      });
    fs.rmSync(ctx.paths.session, { force: true });
  }
  if (!opts.all) {
    ctx.out(
      { session_id: ended, session_file_removed: record !== undefined },
      record ? `Logged out${ended ? ` (${ended})` : ''}; the session file is removed.` : 'No stored session.',
    );
    return;
  }
  const all = await withOwnerSession(ctx, '`xx logout --all`', (owner) =>
    ctx.spin('Ending every session', () =>
      owner.request('POST', '/v1/auth/sessions/revoke-all', { reply: sessionsRevokedSchema }),
    ),
  );
  ctx.out(
    { session_id: ended, session_file_removed: record !== undefined, ...all },
    `Ended ${all.revoked} session(s) of ${all.account_id}. PATs still work; revoke them with \`xx pat revoke\`.`,
  );
}

/** What the dashboard's /cli-handoff page shows a browser that asks for a CLI sign-in (dashboard/src/api/handoff.ts). */
const HANDOFF_STATE = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * The code of the browser that asked for the handoff: `--state`, or, on a terminal, asked for after opening
 * /cli-handoff (which shows it). The handoff link carries it back, and a tab that did not ask refuses the PAT.
 */
async function handoffState(ctx: CliContext, opts: { print?: boolean; state?: string }): Promise<string> {
  let state = opts.state;
  if (state === undefined && ctx.interactive) {
    const start = `${ctx.dashboardUrl()}/cli-handoff`;
    const opened = !opts.print && (await openInBrowser(start));
    ctx.info(opened ? `Opened ${start}: it shows a code.` : `Open ${start} in your browser: it shows a code.`);
  }
  state ??= await ctx.prompt.input({ message: 'The code the dashboard shows', flag: '--state' });
  if (!HANDOFF_STATE.test(state)) throw badArgument('--state', 'the code the dashboard shows at /cli-handoff');
  return state;
}

/**
 * `xx dashboard`: a single-use PAT of the active agent, minted within that agent's PAT (so bounded by it:
 * docs/security-model.md, "Credential lineage"), handed to the browser that asked for it in the URL fragment.
 */
async function dashboard(ctx: CliContext, opts: { print?: boolean; state?: string }): Promise<void> {
  const agent = loadActiveAgent(ctx.paths);
  const state = await handoffState(ctx, opts);
  const created = await withOwnerSession(ctx, '`xx dashboard`', (owner) =>
    ctx.spin('Minting a single-use PAT', () =>
      owner.request('POST', '/v1/pats', {
        body: {
          scope_type: 'agent',
          scope_id: agent.agent_id,
          parent_pat_id: agent.pat_id,
          single_use: true,
          label: 'dashboard handoff',
          expires_in_seconds: 600,
        },
        reply: createdPatSchema,
      }),
    ),
  );
  const url = `${ctx.dashboardUrl()}/cli-handoff#pat=${encodeURIComponent(created.pat)}&state=${encodeURIComponent(state)}`;
  const opened = !opts.print && !ctx.json && (await openInBrowser(url));
  ctx.out(
    { url, pat_id: created.id, agent_id: agent.agent_id, opened },
    opened ? `Opened the dashboard in your browser (single-use PAT ${created.id}).` : url,
  );
}

export function registerAuthCommands(program: Command, contextOf: ContextOf): void {
  program
    .command('login')
    .description('Store a PAT in a credentials profile (--token, or piped on stdin)')
    .option('--token <pat|->', '- (the default): the PAT from stdin, or a prompt; a PAT here is visible to other users')
    .option('--profile <name>', 'profile name (letters, digits, _ . -)', 'default')
    .option('--buy-max <usd>', "this profile's xx buy ceiling when --max is not given (default 1.00)")
    .action(act(contextOf, (ctx, opts: { token?: string; profile?: string; buyMax?: string }) => login(ctx, opts)));
  program
    .command('whoami')
    .description('Show auth_type, scope_type and scope_id of the bearer buyer commands use (see xx --help)')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .option('--session', "the stored session instead (exchanged from the active agent's PAT, renewed when stale)")
    .action(act(contextOf, (ctx, opts: BearerFlags & { session?: boolean }) => whoami(ctx, opts)));
  program
    .command('logout')
    .description('End the stored session; --all ends every session of the account (signs in again)')
    .option('--all', 'end every session of the account, on every machine')
    .action(act(contextOf, (ctx, opts: { all?: boolean }) => logout(ctx, opts)));

  const profile = program.command('profile').description('PAT profiles in the credentials file');
  profile
    .command('list')
    .description('The profiles, the active one marked')
    .action(act(contextOf, async (ctx) => profiles(ctx, 'list')));
  profile
    .command('switch <name>')
    .description('Make a profile the active one (buyer commands use it)')
    .action(act(contextOf, async (ctx, _o, [name]) => profiles(ctx, 'switch', name)));
  profile
    .command('delete <name>')
    .description('Remove a profile from the credentials file')
    .action(act(contextOf, async (ctx, _o, [name]) => profiles(ctx, 'delete', name)));

  const pat = program.command('pat').description('Personal access tokens (account session)');
  pat
    .command('list')
    .description("The account's PATs (no secrets): scope, label, daily cap, expiry")
    .action(act(contextOf, (ctx) => patList(ctx)));
  pat
    .command('create')
    .description('Mint a PAT (shown once): an agent PAT with a daily cap, or a treasury / gate PAT')
    .option('--label <label>')
    .option('--scope <scope>', 'agent, treasury or gate (the gate bearer, docs/gate.md)', 'agent')
    .option('--gate', 'with --scope treasury: the PAT also carries the gate scope')
    .option('--daily-cap <usd>', 'daily spend cap (agent PATs)')
    .option('--expires-in <seconds>')
    .action(
      act(
        contextOf,
        (ctx, opts: { label?: string; scope?: string; dailyCap?: string; expiresIn?: string; gate?: boolean }) =>
          patCreate(ctx, opts),
      ),
    );
  pat
    .command('update <pat_id>')
    .description("Change an agent PAT's daily spend cap (USD, or none)")
    .option('--daily-cap <usd|none>', 'the new daily cap, or none to remove it')
    .action(act(contextOf, (ctx, opts: { dailyCap?: string }, [id]) => patUpdate(ctx, id!, opts)));
  pat
    .command('revoke <pat_id>')
    .description('Revoke a PAT at once')
    .action(act(contextOf, (ctx, _o, [id]) => patRevoke(ctx, id!)));

  program
    .command('dashboard')
    .description('Open the dashboard, handing over a single-use PAT in the URL fragment')
    .option('--print', 'print the URL instead of opening a browser')
    .option('--state <code>', 'the code the dashboard shows at /cli-handoff (asked for on a terminal)')
    .action(act(contextOf, (ctx, opts: { print?: boolean; state?: string }) => dashboard(ctx, opts)));
}
