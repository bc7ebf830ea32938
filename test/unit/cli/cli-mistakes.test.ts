/**
 * A mistyped command or option (src/cli/program.ts): the error line, commander's suggestion and one line pointing
 * at the help — not the whole help text — and exit 2; under --json one JSON object with `invalid_arguments`.
 */
import assert from 'node:assert/strict';
import { runCli } from '../../../src/cli/program.js';

/** Runs `xx …args` in this process with stderr captured (async: the CLI loads its commands lazily). */
async function xx(...args: string[]): Promise<{ code: number; err: string }> {
  const write = process.stderr.write;
  let err = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await runCli(['node', 'xx', ...args]), err };
  } finally {
    process.stderr.write = write;
  }
}

describe('xx: mistyped commands and options', () => {
  it('a mistyped command prints the error, the suggestion and a pointer to the help, not the help', async () => {
    const { code, err } = await xx('walet');
    assert.equal(code, 2);
    assert.match(err, /unknown command 'walet'/);
    assert.match(err, /Did you mean wallet\?/);
    assert.match(err, /run 'xx --help'/);
    assert.doesNotMatch(err, /Usage: xx/);
    assert.ok(err.trim().split('\n').length <= 4, err);
  });

  it('a mistyped subcommand option does the same', async () => {
    const { code, err } = await xx('wallet', 'balance', '--jsno');
    assert.equal(code, 2);
    assert.match(err, /unknown option '--jsno'/);
    assert.doesNotMatch(err, /Usage:/);
  });

  it('under --json: one JSON object, invalid_arguments', async () => {
    const { code, err } = await xx('walet', '--json');
    assert.equal(code, 2);
    const lines = err.trim().split('\n');
    assert.equal(lines.length, 1, err);
    assert.equal(JSON.parse(lines[0]!).error_code, 'invalid_arguments');
  });
});
