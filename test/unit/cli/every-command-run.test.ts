/**
 * Every command of the `xx` tree (src/cli/program.ts, walked to its leaves) is run through the binary by at
 * least one CLI suite: a suite under test/integration/cli/ or test/e2e/ holds its words as an argument list
 * (`['service', 'banking', 'set'` …). A command added without such a run fails here, naming it.
 *
 * What it does not prove: that the run asserts the command's effect — the suites do that (through the API).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../../src/cli/program.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SUITE_DIRS = ['test/integration/cli', 'test/e2e'];

/** The word lists of every leaf command (`['service', 'banking', 'set']`). */
function leafCommands(program: Command): string[][] {
  const leaves: string[][] = [];
  const walk = (cmd: Command, words: string[]) => {
    if (cmd.commands.length === 0) leaves.push(words);
    for (const sub of cmd.commands) walk(sub, [...words, sub.name()]);
  };
  walk(program, []);
  return leaves;
}

/** `'a', 'b'` … as written in an argument list, opened by `[` and followed by `,` or `]`. */
function runIn(source: string, words: readonly string[]): boolean {
  let from = 0;
  const head = `'${words[0]}'`;
  for (let at = source.indexOf(head, from); at !== -1; at = source.indexOf(head, from)) {
    from = at + head.length;
    if (!/\[\s*$/.test(source.slice(Math.max(0, at - 20), at))) continue;
    let rest = source.slice(from);
    let all = true;
    for (const word of words.slice(1)) {
      const next = /^\s*,\s*/.exec(rest);
      if (!next || !rest.slice(next[0].length).startsWith(`'${word}'`)) {
        all = false;
        break;
      }
      rest = rest.slice(next[0].length + word.length + 2);
    }
    if (all && /^\s*[,\]]/.test(rest)) return true;
  }
  return false;
}

describe('every xx command is run through the binary by a CLI suite', () => {
  const suites = SUITE_DIRS.flatMap((dir) =>
    fs
      .readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => fs.readFileSync(path.join(ROOT, dir, f), 'utf8')),
  ).join('\n');

  it('finds the command tree', async () => {
    const leaves = leafCommands(await buildProgram({ json: true })).map((w) => w.join(' '));
    for (const known of ['init', 'buy', 'service banking set', 'endpoints price', 'payout-mode set', 'refresh'])
      assert.ok(leaves.includes(known), known);
  });

  it('recognises a run and only a run', () => {
    assert.equal(runIn(`await json(['service', 'banking', 'set', '--country'])`, ['service', 'banking', 'set']), true);
    assert.equal(runIn(`runXx(['refresh'], env)`, ['refresh']), true);
    assert.equal(runIn(`xx([\n  'endpoints',\n  'update',\n  id])`, ['endpoints', 'update']), true);
    assert.equal(runIn(`json(['service', 'banking', 'status'])`, ['service', 'banking', 'set']), false);
    assert.equal(runIn(`json(['service', 'bankingx'])`, ['service', 'banking']), false);
    assert.equal(runIn(`// 'refresh' re-ingests`, ['refresh']), false);
  });

  it('has a run for each leaf command', async () => {
    const missing = leafCommands(await buildProgram({ json: true }))
      .filter((words) => !runIn(suites, words))
      .map((w) => `xx ${w.join(' ')}`);
    assert.deepEqual(missing, [], `commands no CLI suite runs through the binary:\n${missing.join('\n')}`);
  });
});
