/**
 * The CLI a person expects, through the real binary (bin/xx.mjs): `xx --version` is the package's version;
 * `xx completion bash|zsh|fish` prints a script naming every command of the tree (and bash parses its
 * script: `bash -n`); a refused call prints, in text mode, the next step its `--json` error carries.
 * Against a stub HTTP server that answers every request with one error body: no Treasury needed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildProgram } from '../../../src/cli/program.js';
import { ROOT, runXx, stderrJson, xxHome } from './xx-process.js';
import { fileTempDir } from '../../support/temp-dirs.js';

/** Every command path of the full tree (`['pat', 'create']`). */
async function commandPaths(): Promise<string[][]> {
  const out: string[][] = [];
  const walk = (cmd: import('commander').Command, words: string[]) => {
    for (const sub of cmd.commands) {
      out.push([...words, sub.name()]);
      walk(sub, [...words, sub.name()]);
    }
  };
  walk(await buildProgram({ json: true }), []);
  return out;
}

describe('xx: version, completion, next steps (through the binary)', function () {
  this.timeout(60_000);
  const env = xxHome('start');

  it('xx --version prints the version of package.json', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const run = await runXx([flag], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${version}\n`);
    }
  });

  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    it(`xx completion ${shell} names every command of the tree`, async () => {
      const run = await runXx(['completion', shell], env);
      assert.equal(run.code, 0, run.stderr);
      const missing: string[] = [];
      for (const words of await commandPaths()) {
        const last = words[words.length - 1]!;
        const parent = words.slice(0, -1).join(' ');
        // The command's word under its parent's path (bash/zsh: a case on the path; fish: __xx_path_is).
        const listed =
          shell === 'fish'
            ? run.stdout.includes(`-n '__xx_path_is '\\''${parent}'\\''' -a '${last}'`)
            : new RegExp(`\\n {4}'${parent}'\\)[^\\n]*\\b${last}\\b`).test(run.stdout) ||
              new RegExp(`\\n {4}'${parent}'\\)\\n {6}subs=\\([^\\n]*'${last}:`).test(run.stdout);
        if (!listed) missing.push(words.join(' '));
      }
      assert.deepEqual(missing, [], `commands missing from the ${shell} script`);
      if (shell === 'bash') {
        const file = path.join(fileTempDir('xx-completion-'), 'xx.bash');
        fs.writeFileSync(file, run.stdout);
        const parsed = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
        assert.equal(parsed.status, 0, parsed.stderr);
        // And it completes: `xx pat c<TAB>` → create; `xx pat create --l<TAB>` → --label.
        const complete = (line: string) =>
          spawnSync(
            'bash',
            [
              '-c',
              `source ${file}; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _xx_complete; echo "\${COMPREPLY[*]}"`,
            ],
            { encoding: 'utf8' },
          ).stdout.trim();
        assert.equal(complete('xx pat c'), 'create');
        assert.equal(complete('xx --json pat create --l'), '--label');
        assert.equal(complete('xx service banking s'), 'set status');
      }
    });
  }

  it('xx completion with an unknown shell exits 2 naming it', async () => {
    const run = await runXx(['completion', 'tcsh', '--json'], env);
    assert.equal(run.code, 2);
    assert.equal(stderrJson(run, 'completion tcsh').error_code, 'invalid_argument');
  });

  describe('text mode prints the next step --json carries', () => {
    let server: http.Server;
    let reply: { status: number; body: Record<string, unknown> };
    let url: string;
    before(async () => {
      server = http.createServer((_req, res) => {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const cases = [
      {
        status: 403,
        body: {
          error_code: 'insufficient_funds',
          user_message: 'The wallet holds too little USDC.',
          recovery: { kind: 'fund_wallet', chain: 'eip155:84532', cli_command: 'xx fund --testnet' },
        },
        line: 'Next: xx fund --testnet',
      },
      {
        status: 429,
        body: {
          error_code: 'MGMT_6014',
          user_message: 'Daily cap of 5 USD reached for this PAT.',
          recovery: {
            kind: 'raise_pat_cap',
            settings_url: 'https://dash.example/settings/pats/pat_1',
            cli_command: 'xx pat update pat_1 --daily-cap <usd>',
          },
        },
        line: 'Settings: https://dash.example/settings/pats/pat_1\nNext: xx pat update pat_1 --daily-cap <usd>',
      },
    ];
    for (const c of cases) {
      it(`${c.body.error_code}: the cli_command of --json's recovery, printed in text mode`, async () => {
        reply = c;
        const runEnv = { ...env, XX_PAT: `xx_pat_${'a'.repeat(24)}`, XX_API_URL: url };
        const json = await runXx(['whoami', '--json'], runEnv);
        assert.equal(json.code, 1, json.stderr);
        const recovery = stderrJson(json, 'whoami --json').recovery as { cli_command: string };
        const text = await runXx(['whoami'], runEnv);
        assert.equal(text.code, 1);
        assert.ok(text.stderr.includes(c.line), text.stderr);
        assert.ok(text.stderr.includes(`Next: ${recovery.cli_command}\n`), text.stderr);
      });
    }
  });
});
