/**
 * The `xx` command tree (docs/cli.md): account and buyer commands, `buy`, the seller commands, with the
 * global `--json` and `--version`. Commander's own argument errors (unknown option, missing argument) exit
 * 2, as JSON on stderr under `--json`.
 *
 * Start-up is light: `runCli` builds the root from the table in command-table.ts and loads only the
 * module of the command named on the line (none for `xx --help` / `--version`), so help loads no viem
 * or zod. `buildProgram` loads every module (tests; `xx completion`, through the `wholeTree` handed to each
 * module's `register` and called only when that command runs).
 */
import { Command, CommanderError } from 'commander';
import { addExamples } from './command-examples.js';
import { COMMAND_TABLE, everyLoader, type Loader } from './command-table.js';
import type { CliContext } from './core/cli-context.js';
import { CREDENTIALS_HELP } from './core/credentials-help.js';
import { cliVersion } from './core/cli-version.js';

export interface BuildProgramOptions {
  /** `--json` was given: commander's own messages are suppressed (runCli prints them as one JSON object). */
  json?: boolean;
  /** The environment the commands read (XX_* settings); default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The root `xx` command with its global options and help text, and no subcommands. */
function createRoot(json: boolean): Command {
  return (
    new Command('xx')
      .description('Treasury: custodial wallets for agents that pay with x402, and the seller platform')
      .version(cliVersion(), '-V, --version', 'print the version of xx')
      .option('--json', 'machine-readable output on stdout; errors as JSON on stderr')
      // A mistake gets its one line (and commander's "Did you mean …?"), then a pointer to the help, not the help.
      .showHelpAfterError(json ? false : "(run 'xx --help' for the commands, 'xx <command> --help' for one)")
      .exitOverride()
      .configureOutput({ writeErr: (s) => (json ? undefined : process.stderr.write(s)) })
      .addHelpText('after', CREDENTIALS_HELP)
  );
}

/** The per-run context, built once from the first command that asks (cli-context.ts loads with it). */
async function contextFactory(options: BuildProgramOptions): Promise<(cmd: Command) => CliContext> {
  const { createCliContext } = await import('./core/cli-context.js');
  let cached: CliContext | undefined;
  return (cmd) =>
    (cached ??= createCliContext({
      json: Boolean(cmd.optsWithGlobals().json),
      ...(options.env ? { env: options.env } : {}),
    }));
}

/** The whole command tree, every module loaded, in the order of the table. */
export async function buildProgram(options: BuildProgramOptions = {}): Promise<Command> {
  const program = createRoot(options.json ?? process.argv.includes('--json'));
  const contextOf = await contextFactory(options);
  for (const register of await Promise.all(everyLoader().map((load) => load())))
    register(program, contextOf, wholeTree);
  addExamples(program);
  return program;
}

/** The whole tree as `xx completion` walks it, built only when that command runs. */
function wholeTree(): Promise<Command> {
  return buildProgram({ json: true });
}

/** The command word of argv (`xx --json whoami` → whoami; `xx help pat` → pat), or undefined. */
function commandWord(argv: string[]): string | undefined {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The root with the named command's module loaded and every other command as a stub (name and
 * description only: enough for the root help, the unknown-command error and its suggestion).
 */
export async function lightProgram(argv: string[], json: boolean): Promise<Command> {
  const program = createRoot(json);
  const word = commandWord(argv);
  const chosen: Loader | undefined = COMMAND_TABLE.find((e) => e.name === word)?.load;
  const terms = new Map<string, string>();
  for (const entry of COMMAND_TABLE) {
    if (entry.load === chosen) continue;
    program.command(entry.name).description(entry.description);
    terms.set(entry.name, entry.term);
  }
  const help = program.createHelp();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd) });
  if (chosen) {
    const [register, contextOf] = await Promise.all([chosen(), contextFactory({ json })]);
    register(program, contextOf, wholeTree);
    addExamples(program);
  }
  return program;
}

/** Parses argv and runs; resolves with the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    const program = await lightProgram(argv, json);
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
    const { renderError } = await import('./core/run-command.js');
    return renderError(err, json);
  }
}
