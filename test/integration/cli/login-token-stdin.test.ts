/**
 * `xx login` and `--profile` through the real `xx` binary against a test Treasury (PostgreSQL, SoftHSM):
 * `--token -` takes the PAT from stdin, with no warning; `--token <PAT>` still works but warns on stderr that
 * the PAT sits in the process list (a line in text mode; under --json one JSON object, on success only); a
 * profile name is checked at the flag before any PAT is read — `__proto__` is exit 2 naming `--profile` —
 * and one that is a key of the object prototype (`constructor`) is `profile_not_found`, never a bearer-less
 * request, even with XX_API_URL set.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { runXx, stderrJson, stdoutJson, xxHome } from './xx-process.js';

describe('xx login: the PAT on stdin, a warning for one in argv; profile names at the flag (CLI subprocess)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();
  let pat = '';

  before(async () => {
    const me = await signInWithNewKey(t);
    const minted = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    });
    pat = minted.body.pat as string;
  });

  it('--token - reads stdin and warns of nothing; --token <PAT> works and warns, on stderr only', async () => {
    const env = xxHome('login-stdin', { XX_API_URL: t.baseUrl });
    const piped = await runXx(['login', '--token', '-', '--profile', 'ci', '--json'], env, `${pat}\n`);
    assert.equal(stdoutJson(piped, 'login --token -').profile, 'ci');
    assert.equal(piped.stderr, '', 'no warning for a PAT on stdin');
    const creds = JSON.parse(fs.readFileSync(env.XX_CREDENTIALS_PATH!, 'utf8'));
    assert.deepEqual([creds.active, creds.profiles.ci.token], ['ci', pat]);

    const json = await runXx(['login', '--token', pat, '--profile', 'argv', '--json'], env);
    assert.equal(stdoutJson(json, 'login --token <PAT> --json').profile, 'argv');
    assert.equal(stderrJson(json, 'login --token <PAT> --json').warning, 'token_in_argv');
    assert.ok(!json.stderr.includes(pat), 'the warning does not repeat the PAT');

    const text = await runXx(['login', '--token', pat, '--profile', 'argv'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stderr, /^Warning: --token put the PAT in the command line.*`xx login --token -`/m);
    assert.ok(!text.stdout.includes(pat) && !text.stderr.includes(pat));
  });

  it('--profile __proto__ is exit 2 naming --profile; --profile constructor is profile_not_found', async () => {
    const env = xxHome('login-names', { XX_API_URL: t.baseUrl });
    const proto = await runXx(['login', '--profile', '__proto__', '--token', '-', '--json'], env, `${pat}\n`);
    assert.equal(proto.code, 2, proto.stderr);
    assert.deepEqual(
      [stderrJson(proto, 'login --profile __proto__').error_code, stderrJson(proto, '').details],
      ['invalid_argument', { flag: '--profile' }],
    );
    assert.equal(fs.existsSync(env.XX_CREDENTIALS_PATH!), false, 'nothing stored');

    stdoutJson(await runXx(['login', '--token', '-', '--json'], env, pat), 'login (default profile)');
    for (const args of [
      ['whoami', '--profile', 'constructor', '--json'],
      ['history', '--profile', 'toString', '--json'],
    ]) {
      const run = await runXx(args, env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(stderrJson(run, args.join(' ')).error_code, 'profile_not_found');
    }
    const whoProto = await runXx(['whoami', '--profile', '__proto__', '--json'], env);
    assert.deepEqual(
      [whoProto.code, stderrJson(whoProto, 'whoami --profile __proto__').error_code],
      [2, 'invalid_argument'],
    );
  });
});
