/**
 * The light table of the `xx` top-level commands: name, help term, one-line description, and the loader of
 * the module that registers it. `xx --help` is printed from this table alone, and a run loads only the
 * module of the command it names (docs/cli.md, "Start-up"), so start-up loads no viem or zod. Commands
 * that share a module share its loader (one `load` reference), and the module registers them all.
 *
 * What keeps it honest: test/unit/cli/cli-tree.test.ts checks that each loader registers exactly the names
 * given here, with these terms and descriptions, and that the light `xx --help` equals the full tree's.
 */
import type { Command } from 'commander';
import type { CliContext } from './core/cli-context.js';

/**
 * Registers a module's commands on `program`. `wholeTree` builds the whole tree, every module loaded
 * (program.ts's `buildProgram`), for a command that walks it (`xx completion`), so no command module imports
 * program.ts.
 */
export type Register = (
  program: Command,
  contextOf: (cmd: Command) => CliContext,
  wholeTree: () => Promise<Command>,
) => void;
export type Loader = () => Promise<Register>;

export interface CommandEntry {
  /** The word typed after `xx`. */
  name: string;
  /** As the root help lists it (`buy [options] <url>`). */
  term: string;
  description: string;
  load: Loader;
}

const init: Loader = async () => (await import('./commands/account/index.js')).registerInitCommand;
const auth: Loader = async () => (await import('./commands/account/auth-commands.js')).registerAuthCommands;
const agent: Loader = async () => (await import('./commands/account/agent-commands.js')).registerAgentCommands;
const wallet: Loader = async () => (await import('./commands/account/wallet-commands.js')).registerWalletCommands;
const fund: Loader = async () => (await import('./commands/account/fund-command.js')).registerFundCommand;
const buy: Loader = async () => (await import('./commands/buy/index.js')).registerBuyCommand;
const service: Loader = async () => (await import('./commands/seller/service-commands.js')).registerServiceCommands;
const endpoints: Loader = async () => (await import('./commands/seller/endpoint-commands.js')).registerEndpointCommands;
const ledger: Loader = async () => (await import('./commands/seller/ledger-commands.js')).registerLedgerCommands;
const status: Loader = async () => (await import('./commands/seller/status-command.js')).registerStatusCommand;
const payoutMode: Loader = async () =>
  (await import('./commands/seller/payout-mode-commands.js')).registerPayoutModeCommands;
const verify: Loader = async () => (await import('./commands/seller/verify-commands.js')).registerVerifyCommands;
const keys: Loader = async () => (await import('./commands/seller/keys-commands.js')).registerKeysCommands;
const history: Loader = async () => (await import('./commands/history/index.js')).registerHistoryCommand;
const discover: Loader = async () => (await import('./commands/discover/index.js')).registerDiscoverCommand;
const mcp: Loader = async () => (await import('./commands/mcp/index.js')).registerMcpCommand;
const completion: Loader = async () => (await import('./commands/completion/index.js')).registerCompletionCommand;

/** What the root help says of each command, by name. */
const DESCRIPTIONS = {
  init: 'Onboard: seed, addresses, sign-in, agent, a capped PAT and a managed wallet with a policy',
  login: 'Store a PAT in a credentials profile (--token, or piped on stdin)',
  whoami: 'Show auth_type, scope_type and scope_id of the bearer buyer commands use (see xx --help)',
  logout: 'End the stored session; --all ends every session of the account (signs in again)',
  profile: 'PAT profiles in the credentials file',
  pat: 'Personal access tokens (account session)',
  dashboard: 'Open the dashboard, handing over a single-use PAT in the URL fragment',
  agent: 'Agents (list, switch, label and delete are local)',
  wallet: 'Self-custody seeds in encrypted keystores',
  fund: "Testnet funds for the agent's wallet (credentials: see xx --help)",
  buy: "Run the x402 exchange with the agent's Treasury wallet (credentials: see xx --help)",
  service: 'Register and manage your seller service',
  endpoints: 'Priced endpoints of the active service',
  ledger: 'Transactions of the active service',
  status: 'Env, service status and endpoint health',
  'payout-mode': 'How the active service is paid',
  verify: 'Prove you own the origin via /.well-known/xx-verification.txt',
  refresh: 'Re-ingest the OpenAPI document and show the changes',
  keys: 'Deprecated: master keys were removed (use service PATs)',
  history: "The agent's payments, newest first (status, amount, payee, resource, tx hash)",
  discover: 'Search the public catalogue of paid APIs (price, network, seller, resource, schemas)',
  mcp: "Serve Treasury's buyer tools (discover, list_wallets, get_balance, pay, check_policy, payment_history) over MCP",
  completion: 'Print a shell completion script (bash, zsh or fish) for the whole command tree',
} as const;

/** A row: the command's name (which names its description), what follows it in its help term, and its loader. */
function row(name: keyof typeof DESCRIPTIONS, args: string, load: Loader): CommandEntry {
  return { name, term: args ? `${name} ${args}` : name, description: DESCRIPTIONS[name], load };
}

export const COMMAND_TABLE: readonly CommandEntry[] = [
  row('init', '[options]', init),
  row('login', '[options]', auth),
  row('whoami', '[options]', auth),
  row('logout', '[options]', auth),
  row('profile', '', auth),
  row('pat', '', auth),
  row('dashboard', '[options]', auth),
  row('agent', '', agent),
  row('wallet', '', wallet),
  row('fund', '[options]', fund),
  row('buy', '[options] <url>', buy),
  row('service', '', service),
  row('endpoints', '', endpoints),
  row('ledger', '', ledger),
  row('status', '', status),
  row('payout-mode', '', payoutMode),
  row('verify', '[options]', verify),
  row('refresh', '', verify),
  row('keys', '', keys),
  row('history', '[options]', history),
  row('discover', '[options] <query>', discover),
  row('mcp', '[options]', mcp),
  row('completion', '<shell>', completion),
];

/** The loaders in table order, each once. */
export function everyLoader(): Loader[] {
  return [...new Set(COMMAND_TABLE.map((e) => e.load))];
}
