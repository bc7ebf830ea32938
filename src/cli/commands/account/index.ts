/**
 * Account and buyer commands of the `xx` CLI (docs/cli.md, "Buyer and account"): init, login, whoami, profile, agent,
 * wallet, fund, dashboard, pat. `buy` lives in ../buy.
 */
import type { Command } from 'commander';
import type { ContextOf } from '../seller/seller-kit.js';
import { registerAgentCommands } from './agent-commands.js';
import { registerAuthCommands } from './auth-commands.js';
import { registerFundCommand } from './fund-command.js';
import { init, type InitOptions } from './init-command.js';
import { act } from '../seller/seller-kit.js';
import { registerWalletCommands } from './wallet-commands.js';

export function registerAccountCommands(program: Command, contextOf: ContextOf): void {
  registerInitCommand(program, contextOf);
  registerAuthCommands(program, contextOf);
  registerAgentCommands(program, contextOf);
  registerWalletCommands(program, contextOf);
  registerFundCommand(program, contextOf);
}

/** The options of `xx init`: flags, help text and, where there is one, the default. */
const INIT_OPTIONS: ReadonlyArray<readonly [flags: string, description: string, defaultValue?: string]> = [
  ['--server <url>', 'Treasury base URL (default XX_API_URL or the saved one)'],
  ['--chain <chain>', 'base, solana or both', 'both'],
  ['--label <label>', 'agent label (on an existing account: the agent with this label, spawned if new)'],
  ['--restore', 'restore the seed from a recovery phrase (hidden prompt or XX_MNEMONIC)'],
  ['--new-seed', 'make a new seed even when a keystore exists (the old file is kept aside)'],
  ['--words <n>', '12 or 24 words for a new seed', '24'],
  ['--profile <name>', 'credentials profile to store the agent PAT in', 'default'],
  ['--daily-cap <usd|none>', "the agent PAT's daily spend cap (default 10; none: no cap)"],
  ['--max-per-payment <usd|none>', "a new managed wallet's per-payment cap (default 1; none: no cap)"],
  ['--daily-limit <usd|none>', "a new managed wallet's daily cap (default 10; none: no cap)"],
  ['--policy <file>', "a new managed wallet's whole policy, as JSON (instead of the two above)"],
];

/** `xx init` alone (the light start-up table in ../../command-table.ts loads it on its own). */
export function registerInitCommand(program: Command, contextOf: ContextOf): void {
  const command = program
    .command('init')
    .description('Onboard: seed, addresses, sign-in, agent, a capped PAT and a managed wallet with a policy');
  for (const [flags, description, defaultValue] of INIT_OPTIONS) command.option(flags, description, defaultValue);
  command.action(act(contextOf, (ctx, opts: InitOptions) => init(ctx, opts)));
}
