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

export type Register = (program: Command, contextOf: (cmd: Command) => CliContext) => void;
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
const mcp: Loader = async () => (await import('./commands/mcp/index.js')).registerMcpCommand;
const completion: Loader = async () => (await import('./commands/completion/index.js')).registerCompletionCommand;

export const COMMAND_TABLE: readonly CommandEntry[] = [
  {
    name: 'init',
    term: 'init [options]',
    description: 'Onboard: seed, addresses, sign-in, agent, a capped PAT and a managed wallet with a policy',
    load: init,
  },
  {
    name: 'login',
    term: 'login [options]',
    description: 'Store a PAT in a credentials profile (--token, or piped on stdin)',
    load: auth,
  },
  {
    name: 'whoami',
    term: 'whoami [options]',
    description: 'Show auth_type, scope_type and scope_id of the bearer buyer commands use (see xx --help)',
    load: auth,
  },
  {
    name: 'logout',
    term: 'logout [options]',
    description: 'End the stored session; --all ends every session of the account (signs in again)',
    load: auth,
  },
  { name: 'profile', term: 'profile', description: 'PAT profiles in the credentials file', load: auth },
  { name: 'pat', term: 'pat', description: 'Personal access tokens (account session)', load: auth },
  {
    name: 'dashboard',
    term: 'dashboard [options]',
    description: 'Open the dashboard, handing over a single-use PAT in the URL fragment',
    load: auth,
  },
  { name: 'agent', term: 'agent', description: 'Agents (list, switch, label and delete are local)', load: agent },
  { name: 'wallet', term: 'wallet', description: 'Self-custody seeds in encrypted keystores', load: wallet },
  {
    name: 'fund',
    term: 'fund [options]',
    description: "Testnet funds for the agent's wallet (credentials: see xx --help)",
    load: fund,
  },
  {
    name: 'buy',
    term: 'buy [options] <url>',
    description: "Run the x402 exchange with the agent's Treasury wallet (credentials: see xx --help)",
    load: buy,
  },
  { name: 'service', term: 'service', description: 'Register and manage your seller service', load: service },
  { name: 'endpoints', term: 'endpoints', description: 'Priced endpoints of the active service', load: endpoints },
  { name: 'ledger', term: 'ledger', description: 'Transactions of the active service', load: ledger },
  { name: 'status', term: 'status', description: 'Env, service status and endpoint health', load: status },
  { name: 'payout-mode', term: 'payout-mode', description: 'How the active service is paid', load: payoutMode },
  {
    name: 'verify',
    term: 'verify [options]',
    description: 'Prove you own the origin via /.well-known/xx-verification.txt',
    load: verify,
  },
  {
    name: 'refresh',
    term: 'refresh',
    description: 'Re-ingest the OpenAPI document and show the changes',
    load: verify,
  },
  {
    name: 'keys',
    term: 'keys',
    description: 'Deprecated: master keys were removed (use service PATs)',
    load: keys,
  },
  {
    name: 'history',
    term: 'history [options]',
    description: "The agent's payments, newest first (status, amount, payee, resource, tx hash)",
    load: history,
  },
  {
    name: 'mcp',
    term: 'mcp [options]',
    description:
      "Serve Treasury's buyer tools (list_wallets, get_balance, pay, check_policy, payment_history) over MCP",
    load: mcp,
  },
  {
    name: 'completion',
    term: 'completion <shell>',
    description: 'Print a shell completion script (bash, zsh or fish) for the whole command tree',
    load: completion,
  },
];

/** The loaders in table order, each once. */
export function everyLoader(): Loader[] {
  return [...new Set(COMMAND_TABLE.map((e) => e.load))];
}
