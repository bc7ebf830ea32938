/**
 * `xx completion bash|zsh|fish`: prints the shell completion script for the whole command tree
 * (completion-scripts.ts walks it; docs/cli.md, "Shell completion"). Loads every command module, which the
 * other commands do not: a completion script is generated once, when the shell is set up. The tree is built by
 * `wholeTree`, which program.ts hands to every module's registration (this module does not import program.ts).
 */
import type { Command } from 'commander';
import { act, badArgument, type ContextOf } from '../seller/seller-kit.js';
import { completionScript, SHELLS, type Shell } from './completion-scripts.js';

export function registerCompletionCommand(
  program: Command,
  contextOf: ContextOf,
  wholeTree: () => Promise<Command>,
): void {
  program
    .command('completion <shell>')
    .description('Print a shell completion script (bash, zsh or fish) for the whole command tree')
    .action(
      act(contextOf, async (_ctx, _opts, [shell]) => {
        if (!SHELLS.includes(shell as Shell)) throw badArgument('<shell>', `one of ${SHELLS.join(', ')}`);
        process.stdout.write(completionScript(await wholeTree(), shell as Shell));
      }),
    );
}
