/**
 * `xx agent {list,show,switch,label,delete}` — list, switch, label and delete work on the local records
 * only (docs/cli.md); show also reads the agent from the platform — and `xx agent wallets {list,add}`:
 * Treasury-managed wallets of the active agent (keys in the HSM; `add` creates the next one).
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { agentWithEveryWallet, type ListedWallet } from '../../core/agent-wallets.js';
import { agentOfBearer } from '../../core/buyer-agent.js';
import { requireBuyerBearer, type BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import {
  deleteAgent,
  listAgents,
  loadActiveAgent,
  loadAgent,
  loadCredentials,
  saveAgent,
  saveCredentials,
  setActiveAgent,
  type AgentRecord,
} from '../../core/cli-state.js';
import { readTextFile } from '../../core/secret-file.js';
import { walletViewSchema } from '../../../shared/api-responses/wallet-responses.js';
import { formatFields, formatTable } from '../seller/seller-format.js';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { readLocalSandbox } from './local-sandbox.js';
import { chainToSend, checkChainArgument } from './wallet-chains.js';

const PROFILE_FLAG = 'a credentials profile instead of XX_PAT / the active profile / the active agent';

const publicView = (a: AgentRecord, active: boolean) => ({
  agent_id: a.agent_id,
  account_id: a.account_id,
  label: a.label,
  server: a.server,
  addresses: a.addresses,
  wallets: a.wallets,
  pat_id: a.pat_id,
  active,
  created_at: a.created_at,
});

/** Wallets on one line: id, address and, where the server says it, whether the policy is owner-signed. */
function walletsLine(wallets: ListedWallet[]): string {
  return wallets.map((w) => `${w.id} ${w.address}${w.policy_state ? ` (${w.policy_state})` : ''}`).join(', ') || 'none';
}

function byRef(ctx: CliContext, ref: string | undefined): AgentRecord {
  if (!ref) return loadActiveAgent(ctx.paths);
  const found = loadAgent(ctx.paths, ref) ?? listAgents(ctx.paths).find((a) => a.label === ref);
  if (!found)
    throw new CliError({ code: 'agent_not_found', userMessage: `No local agent "${ref}" (see \`xx agent list\`).` });
  return found;
}

function list(ctx: CliContext): void {
  const active = readTextFile(ctx.paths.activeAgent);
  const rows = listAgents(ctx.paths).map((a) => publicView(a, a.agent_id === active));
  ctx.out(
    { agents: rows },
    formatTable(
      ['', 'label', 'agent_id', 'base address', 'server'],
      rows.map((r) => [r.active ? '*' : '', r.label, r.agent_id, r.addresses.base ?? '', r.server]),
      'No agents. Run `xx init`.',
    ),
  );
}

async function show(ctx: CliContext, ref: string | undefined, flags: BearerFlags): Promise<void> {
  if (!ref) {
    // The agent of the bearer buyer commands use (xx --help, "Credentials"); headless: the platform's view only.
    const bearer = requireBuyerBearer(ctx, flags);
    if (!bearer.agent) {
      const { client, agentId } = await agentOfBearer(ctx, bearer);
      const remote = await ctx.spin('Loading the agent', () => agentWithEveryWallet(client, agentId));
      ctx.out(
        { agent_id: remote.agent_id, remote_label: remote.label, server: bearer.server, wallets: remote.wallets },
        formatFields([
          ['agent', `${remote.label ?? ''} (${remote.agent_id})`],
          ['server', bearer.server],
          ['wallets', walletsLine(remote.wallets)],
        ]),
      );
      return;
    }
    ref = bearer.agent.agent_id;
  }
  const agent = byRef(ctx, ref);
  const remote = await ctx.spin('Loading the agent', () =>
    agentWithEveryWallet(ctx.client(agent.pat, process.env.XX_API_URL || agent.server), agent.agent_id),
  );
  const view = {
    ...publicView(agent, readTextFile(ctx.paths.activeAgent) === agent.agent_id),
    remote_label: remote.label,
    wallets: remote.wallets,
  };
  ctx.out(
    view,
    formatFields([
      ['agent', `${agent.label} (${agent.agent_id})`],
      ['account', agent.account_id],
      ['server', agent.server],
      ['base address', agent.addresses.base ?? null],
      ['solana address', agent.addresses.solana ?? null],
      ['wallets', walletsLine(view.wallets)],
    ]),
  );
}

function switchTo(ctx: CliContext, ref: string): void {
  const agent = byRef(ctx, ref);
  setActiveAgent(ctx.paths, agent.agent_id);
  // The active profile outranks the active agent (xx --help, "Credentials"): it follows the switch — to the
  // profile holding this agent's PAT, or none, so the switched-to agent's record is what buyer commands use.
  const creds = loadCredentials(ctx.paths);
  const holding = Object.entries(creds.profiles).find(([, p]) => p.token === agent.pat)?.[0];
  if (creds.active !== holding) {
    if (holding) creds.active = holding;
    else delete creds.active;
    saveCredentials(ctx.paths, creds);
  }
  ctx.out(publicView(agent, true), `Agent ${agent.label} (${agent.agent_id}) is active.`);
}

function label(ctx: CliContext, ref: string, newLabel: string): void {
  if (!/^[\p{L}\p{N} ._-]{1,64}$/u.test(newLabel))
    throw badArgument('<label>', 'up to 64 letters, digits, spaces, . _ -');
  const agent = byRef(ctx, ref);
  const updated = { ...agent, label: newLabel };
  saveAgent(ctx.paths, updated);
  ctx.out(
    publicView(updated, readTextFile(ctx.paths.activeAgent) === agent.agent_id),
    `Agent ${agent.agent_id} is now labelled "${newLabel}" (locally).`,
  );
}

async function remove(ctx: CliContext, ref: string, yes: boolean | undefined): Promise<void> {
  const agent = byRef(ctx, ref);
  if (
    !yes &&
    !(await ctx.prompt.confirm({
      message: `Delete the local record of ${agent.label} (${agent.agent_id}) and its PAT copy?`,
      flag: '--yes',
    }))
  ) {
    throw new CliError({ code: 'cancelled', userMessage: 'Nothing deleted.' });
  }
  deleteAgent(ctx.paths, agent.agent_id);
  ctx.out(
    { agent_id: agent.agent_id, deleted: true },
    `Deleted the local record of ${agent.agent_id} (the agent and its PAT still exist on the platform; \`xx pat revoke ${agent.pat_id}\` revokes the PAT).`,
  );
}

async function walletsList(ctx: CliContext, flags: BearerFlags): Promise<void> {
  const bearer = requireBuyerBearer(ctx, flags);
  const { client, agentId } = await agentOfBearer(ctx, bearer);
  const { wallets } = await ctx.spin('Loading wallets', () => agentWithEveryWallet(client, agentId));
  if (bearer.agent) saveAgent(ctx.paths, { ...bearer.agent, wallets });
  ctx.out(
    { agent_id: agentId, wallets },
    formatTable(
      ['id', 'address', 'network', 'label', 'policy'],
      wallets.map((w) => [w.id, w.address, w.network, w.label ?? '', w.policy_state ?? '']),
      'No managed wallets. Add one with `xx agent wallets add`.',
    ),
  );
}

// The local sandbox names its Solana chain when it runs one (TREASURY_SANDBOX_SOLANA, docs/sandbox.md).
const sandboxSolanaSchema = z.object({ api_url: z.string(), solana_network: z.string().optional() }).loose();

/**
 * A managed wallet on the chain `--chain` names (./wallet-chains.ts: `solana` is devnet in the local sandbox),
 * sent as it is otherwise (the server refuses a chain it does not serve with `chain_not_supported`); without
 * `--chain`, the server's default chain.
 */
async function walletsAdd(ctx: CliContext, opts: { chain?: string; label?: string } & BearerFlags): Promise<void> {
  const asked = opts.chain === undefined ? undefined : checkChainArgument(opts.chain);
  const bearer = requireBuyerBearer(ctx, opts);
  const sandboxSolana = readLocalSandbox(bearer.server, sandboxSolanaSchema)?.solana_network !== undefined;
  const chain = asked === undefined ? undefined : chainToSend(asked, sandboxSolana);
  const { client, agentId } = await agentOfBearer(ctx, bearer);
  const w = await ctx.spin('Creating the wallet', () =>
    client.request('POST', `/v1/agents/${agentId}/wallets`, {
      body: { ...(chain ? { chain } : {}), ...(opts.label ? { label: opts.label } : {}) },
      reply: walletViewSchema,
    }),
  );
  const wallet = { id: w.id, address: w.address, chain: w.chain, network: w.network, label: w.label };
  if (bearer.agent) saveAgent(ctx.paths, { ...bearer.agent, wallets: [...bearer.agent.wallets, wallet] });
  // The agent's credentials cannot sign its policy: the owner does, with the seed (docs/cli.md, "Owner-signed policies").
  const unsigned =
    w.policy_state === 'owner_signed'
      ? ''
      : ` Its policy is not owner-signed (the signer holds the wallet to its own ceilings only): the owner signs it with \`xx wallet policy set ${w.id} --file <policy.json>\`.`;
  ctx.out(
    { ...wallet, policy_state: w.policy_state },
    `Added ${wallet.id} ${wallet.address} (${wallet.network}).${unsigned}`,
  );
}

export function registerAgentCommands(program: Command, contextOf: ContextOf): void {
  const agent = program.command('agent').description('Agents (list, switch, label and delete are local)');
  agent
    .command('list')
    .description('The agents this machine knows, the active one marked')
    .action(act(contextOf, async (ctx) => list(ctx)));
  agent
    .command('show [agent]')
    .description('A local agent with its wallets on the platform (default: the agent of the credentials in use)')
    .option('--profile <name>', PROFILE_FLAG)
    .action(act(contextOf, (ctx, o: BearerFlags, [ref]) => show(ctx, ref, o)));
  agent
    .command('switch <agent>')
    .description('Make an agent (id or label) the active one')
    .action(act(contextOf, async (ctx, _o, [ref]) => switchTo(ctx, ref!)));
  agent
    .command('label <agent> <label>')
    .description('Give an agent a local label')
    .action(act(contextOf, async (ctx, _o, [ref, l]) => label(ctx, ref!, l!)));
  agent
    .command('delete <agent>')
    .description("Forget an agent on this machine (its PAT and record; the platform's agent stays)")
    .option('--yes', 'do not ask for confirmation')
    .action(act(contextOf, (ctx, opts: { yes?: boolean }, [ref]) => remove(ctx, ref!, opts.yes)));
  const wallets = agent
    .command('wallets')
    .description("The agent's Treasury-managed wallets (credentials: see xx --help)");
  wallets
    .command('list')
    .description("The agent's managed wallets: id, address, network, label, policy state")
    .option('--profile <name>', PROFILE_FLAG)
    .action(act(contextOf, (ctx, o: BearerFlags) => walletsList(ctx, o)));
  wallets
    .command('add')
    .description('Create a managed wallet for the agent (on --chain, or the server default)')
    .option('--profile <name>', PROFILE_FLAG)
    .option('--chain <chain>', "base, base-sepolia, solana or solana-devnet (default: the server's chain)")
    .option('--label <label>')
    .action(act(contextOf, (ctx, opts: { chain?: string; label?: string } & BearerFlags) => walletsAdd(ctx, opts)));
}
