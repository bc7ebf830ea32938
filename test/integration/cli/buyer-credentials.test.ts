/**
 * Headless credentials through the real `xx` binary against a test Treasury (PostgreSQL, SoftHSM): a home
 * holding nothing but `XX_PAT` runs `whoami`, `agent show`, `agent wallets list|add` and `history` as the
 * PAT's agent (and writes no file); `--profile` picks a `xx login` profile over `XX_PAT`; an unknown
 * `--profile` is exit 2; `xx agent switch` makes the profile holding the agent's PAT active; `xx --help`
 * states the order.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestTreasury } from '../../support/api-harness.js';
import {
  assertOk,
  filesUnder,
  runXx,
  startForwardedTreasury,
  stderrJson,
  stdoutJson,
  xxHome,
  xxHomeFor,
  type Forwarder,
} from './xx-process.js';

describe('buyer credentials: XX_PAT, --profile, active profile, active agent (CLI subprocess, HTTP)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let forwarder: Forwarder;
  let owner: Record<string, string> & { HOME: string };
  let init: { agent_id: string; wallets: Array<{ id: string }> };
  let pat: string;

  before(async () => {
    ({ forwarder, t } = await startForwardedTreasury());
    owner = xxHomeFor('creds', forwarder.url, 'creds passphrase');
    init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], owner), 'init');
    pat = JSON.parse(fs.readFileSync(path.join(owner.XX_AGENTS_DIR!, `${init.agent_id}.json`), 'utf8')).pat;
  });
  after(async () => {
    await forwarder?.close();
    await t?.stop();
  });

  it('a home with only XX_PAT runs the buyer commands as the PAT’s agent and writes nothing', async () => {
    const env = xxHome('headless', { XX_PAT: pat, XX_API_URL: forwarder.url });
    const who = stdoutJson(await runXx(['whoami', '--json'], env), 'whoami');
    assert.deepEqual([who.scope_id, who.source], [init.agent_id, 'XX_PAT']);
    const listed = stdoutJson(await runXx(['agent', 'wallets', 'list', '--json'], env), 'agent wallets list');
    assert.deepEqual(
      listed.wallets.map((w: { id: string }) => w.id),
      init.wallets.map((w) => w.id),
    );
    const added = stdoutJson(await runXx(['agent', 'wallets', 'add', '--label', 'ci', '--json'], env), 'wallets add');
    assert.match(added.id, /^wal_/);
    const shown = stdoutJson(await runXx(['agent', 'show', '--json'], env), 'agent show');
    assert.equal(shown.agent_id, init.agent_id);
    assert.equal(shown.wallets.length, 2);
    assert.deepEqual(stdoutJson(await runXx(['history', '--json'], env), 'history'), {
      payments: [],
      next_cursor: null,
    });
    assert.match(assertOk(await runXx(['history'], env), 'history (text)').stdout, /No payments yet/);
    assert.deepEqual(filesUnder(env.HOME), [], 'nothing written to the headless home');
    assert.ok(!JSON.stringify(shown).includes(pat));

    const bad = await runXx(['whoami', '--json'], { ...env, XX_PAT: 'xx_pat_short' });
    assert.equal(bad.code, 2);
    assert.equal(stderrJson(bad, 'whoami with a malformed XX_PAT').details.variable, 'XX_PAT');
  });

  it('--profile outranks XX_PAT; an unknown one is exit 2; agent switch moves the active profile; --help states the order', async () => {
    // A second agent PAT, stored as profile "ci" by xx login; XX_PAT holds a PAT the server does not know.
    const minted = stdoutJson(await runXx(['pat', 'create', '--label', 'ci', '--json'], owner), 'pat create');
    assertOk(await runXx(['login', '--profile', 'ci', '--token', minted.pat, '--json'], owner), 'login');
    const stranger = { ...owner, XX_PAT: `xx_pat_${'z'.repeat(30)}` };
    const refused = await runXx(['whoami', '--json'], stranger);
    assert.equal(refused.code, 1, 'XX_PAT outranks the active profile');
    const viaFlag = stdoutJson(await runXx(['whoami', '--profile', 'ci', '--json'], stranger), 'whoami --profile');
    assert.deepEqual([viaFlag.source, viaFlag.scope_id], ['profile ci (--profile)', init.agent_id]);
    const unknown = await runXx(['history', '--profile', 'nope', '--json'], owner);
    assert.equal(unknown.code, 2);
    assert.equal(stderrJson(unknown, 'history --profile nope').error_code, 'profile_not_found');

    assert.equal(stdoutJson(await runXx(['whoami', '--json'], owner), 'whoami').source, 'profile ci');
    assertOk(await runXx(['agent', 'switch', init.agent_id, '--json'], owner), 'agent switch');
    const creds = JSON.parse(fs.readFileSync(owner.XX_CREDENTIALS_PATH!, 'utf8'));
    assert.equal(creds.profiles[creds.active].token, pat, "the active profile is the switched-to agent's");
    assert.equal(stdoutJson(await runXx(['whoami', '--json'], owner), 'whoami').source, `profile ${creds.active}`);

    const help = assertOk(await runXx(['--help'], owner), 'xx --help').stdout;
    assert.match(
      help,
      /Credentials .*first found wins:\n\s+1\. --profile <name>.*\n\s+2\. XX_PAT.*\n\s+3\. the active profile.*\n\s+4\. the active agent/,
    );
  });
});
