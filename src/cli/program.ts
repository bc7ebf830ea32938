/**
 * The `xx` command tree (docs/cli.md): account and buyer commands, `buy`, and the seller commands, with the
 * global `--json`. Commander's own argument errors (unknown option, missing argument) exit 2, as JSON on
 * stderr under `--json`.
 */
import { Command, CommanderError } from 'commander';
import { registerAccountCommands } from './commands/account/index.js';
import { registerBuyCommand } from './commands/buy/index.js';
import { registerHistoryCommand } from './commands/history/index.js';
import { registerMcpCommand } from './commands/mcp/index.js';
import { registerSellerCommands } from './commands/seller/index.js';
import { CREDENTIALS_HELP } from './core/buyer-bearer.js';
import { createCliContext, type CliContext } from './core/cli-context.js';
import { renderError } from './core/run-command.js';

export interface BuildProgramOptions {
  /** `--json` was given: commander's own messages are suppressed (runCli prints them as one JSON object). */
  json?: boolean;
  /** The environment the commands read (XX_* settings); default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The whole command tree: account and buyer commands, `buy`, and the seller commands. */
export function buildProgram(options: BuildProgramOptions = {}): Command {
  const json = options.json ?? process.argv.includes('--json');
  const program = new Command('xx')
    .description('Treasury: custodial wallets for agents that pay with x402, and the seller platform')
    .option('--json', 'machine-readable output on stdout; errors as JSON on stderr')
    .showHelpAfterError(!json)
    .exitOverride()
    .configureOutput({ writeErr: (s) => (json ? undefined : process.stderr.write(s)) });
  let cached: CliContext | undefined;
  const contextOf = (cmd: Command): CliContext =>
    (cached ??= createCliContext({
      json: Boolean(cmd.optsWithGlobals().json),
      ...(options.env ? { env: options.env } : {}),
    }));
  registerAccountCommands(program, contextOf);
  registerBuyCommand(program, contextOf);
  registerSellerCommands(program, contextOf);
  registerHistoryCommand(program, contextOf);
  registerMcpCommand(program, contextOf);
  program.addHelpText('after', CREDENTIALS_HELP);
  return program;
}

/** Parses argv and runs; resolves with the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const program = buildProgram({ json });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 0;
      if (json)
        process.stderr.write(
          `${JSON.stringify({ error_code: 'invalid_arguments', user_message: err.message.replace(/^error: /, '') })}\n`,
        );
      return 2;
    }
    return renderError(err, json);
  }
}
