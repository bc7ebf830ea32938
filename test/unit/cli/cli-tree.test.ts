/**
 * The `xx` command tree as a person meets it: every command (walked to the leaves) has a description and an
 * example in its help; the light start-up table (src/cli/command-table.ts) says exactly what its modules
 * register, so the root help printed from the table alone equals the full tree's; the example table names
 * no command that is gone; the next step of a recovery block is printed in text mode.
 */
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { COMMAND_EXAMPLES, commandPath } from '../../../src/cli/command-examples.js';
import { COMMAND_TABLE } from '../../../src/cli/command-table.js';
import type { CliContext } from '../../../src/cli/core/cli-context.js';
import { nextStepLines } from '../../../src/cli/core/run-command.js';
import { buildProgram, lightProgram } from '../../../src/cli/program.js';

function everyCommand(root: Command): Command[] {
  const all: Command[] = [];
  const walk = (cmd: Command) => {
    for (const sub of cmd.commands) {
      all.push(sub);
      walk(sub);
    }
  };
  walk(root);
  return all;
}

/** The whole help a person sees for `cmd`, with the text added after it. */
function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s) });
  cmd.outputHelp();
  return out;
}

describe('xx command tree: descriptions, examples, the light start-up table', () => {
  let full: Command;
  before(async () => {
    full = await buildProgram({ json: true });
  });

  it('every command has a description and an example in its help', () => {
    const commands = everyCommand(full);
    assert.ok(commands.length > 50, `${commands.length} commands`);
    const lacking = commands
      .filter((c) => !c.description() || !/\nExample:\n {2}\S/.test(helpOf(c)))
      .map((c) => `xx ${commandPath(c)}${c.description() ? '' : ' (no description)'}`);
    assert.deepEqual(lacking, [], `commands without a description or an example:\n${lacking.join('\n')}`);
  });

  it('the example table names only commands of the tree', () => {
    const paths = new Set(everyCommand(full).map(commandPath));
    assert.deepEqual(
      Object.keys(COMMAND_EXAMPLES).filter((p) => !paths.has(p)),
      [],
    );
  });

  it('each loader of the table registers exactly the names the table gives it, with its term and description', async () => {
    const help = new Command().createHelp();
    const byLoader = new Map<unknown, string[]>();
    for (const e of COMMAND_TABLE) byLoader.set(e.load, [...(byLoader.get(e.load) ?? []), e.name]);
    for (const [load, names] of byLoader) {
      const root = new Command('xx');
      (await (load as () => Promise<(p: Command, c: (cmd: Command) => CliContext) => void>)())(root, () => {
        throw new Error('not run');
      });
      assert.deepEqual(
        root.commands.map((c) => c.name()),
        names,
      );
      for (const cmd of root.commands) {
        const entry = COMMAND_TABLE.find((e) => e.name === cmd.name())!;
        assert.equal(entry.description, cmd.description(), `description of ${cmd.name()}`);
        assert.equal(entry.term, help.subcommandTerm(cmd), `term of ${cmd.name()}`);
      }
    }
  });

  it('the root help from the table alone is the full tree’s', async () => {
    const light = await lightProgram(['node', 'xx', '--help'], true);
    assert.equal(light.helpInformation(), full.helpInformation());
    assert.ok(
      light.commands.every((c) => c.commands.length === 0 && c.options.length === 0),
      'stubs only',
    );
  });

  it('a run loads the named command only, the others stay stubs', async () => {
    const light = await lightProgram(['node', 'xx', '--json', 'pat', 'create', '--help'], true);
    const pat = light.commands.find((c) => c.name() === 'pat')!;
    assert.ok(pat.commands.some((c) => c.name() === 'create'));
    assert.equal(light.commands.find((c) => c.name() === 'service')!.commands.length, 0);
    assert.match(helpOf(pat.commands.find((c) => c.name() === 'create')!), /Example:\n {2}xx pat create/);
  });

  it('text mode prints the next step of a recovery block, as one line', () => {
    assert.deepEqual(nextStepLines({ kind: 'fund_wallet', cli_command: 'xx fund --testnet' }), [
      'Next: xx fund --testnet',
    ]);
    assert.deepEqual(
      nextStepLines({ kind: 'reauthenticate', cli_command: 'xx init', login_command: 'xx login --token <PAT>' }),
      ['Sign in again with `xx init` (or, with a PAT: `xx login --token <PAT>`).'],
    );
    assert.deepEqual(nextStepLines({ kind: 'raise_pat_cap', cli_command: 'xx pat\u001b[2J\nupdate' }), [
      'Next: xx pat [2J update',
    ]);
    assert.deepEqual(nextStepLines({ kind: 'raise_max_amount' }), []);
  });
});
