/**
 * `xx logout` and `xx logout --all` through the real `xx` binary against a test Treasury, their effect checked
 * through the API: the stored session is refused once logged out and its file removed; `--all` (the owner signs
 * in again) ends every session of the account, a session exchanged meanwhile included, and says how many.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { TestTreasury } from '../../support/api-harness.js';
import { assertOk, runXx, startForwardedTreasury, type Forwarder, stdoutJson, xxHomeFor } from './xx-process.js';

describe('xx logout (CLI subprocess, HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let forwarder: Forwarder;
  let env: Record<string, string> & { HOME: string };

  before(async () => {
    ({ forwarder, t } = await startForwardedTreasury());
    env = xxHomeFor('logout', forwarder.url, 'logout passphrase');
    assertOk(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
  });
  after(async () => {
    await forwarder?.close();
    await t?.stop();
    if (env?.HOME) fs.rmSync(env.HOME, { recursive: true, force: true });
  });

  it('logout ends the stored session; logout --all ends every session of the account', async () => {
    const sessionOf = () => JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8')).session as string;
    const whoami = (token: string) => t.request('GET', '/v1/auth/whoami', { token });
    const first = sessionOf();
    assert.equal((await whoami(first)).status, 200);

    const out = stdoutJson(await runXx(['logout', '--json'], env), 'logout');
    assert.equal(out.session_file_removed, true);
    assert.match(out.session_id, /^[a-z]{3,4}_[0-9a-f]{24}$/);
    assert.equal(fs.existsSync(env.XX_SESSION_PATH!), false);
    assert.equal((await whoami(first)).status, 401, 'the logged-out session is refused');

    // A command using the session (an agent read: whoami and the agent's wallets) exchanges the agent PAT for a
    // new session and stores it; --all ends it too.
    const who = stdoutJson(await runXx(['whoami', '--session', '--json'], env), 'whoami --session');
    assert.deepEqual([who.source, who.session_origin], ['session', 'pat_exchange']);
    const second = sessionOf();
    assert.notEqual(second, first);
    assert.equal((await whoami(second)).status, 200);
    const all = stdoutJson(await runXx(['logout', '--all', '--json'], env), 'logout --all');
    assert.ok(all.revoked >= 1, JSON.stringify(all));
    assert.match(all.account_id, /^acc_/);
    assert.equal((await whoami(second)).status, 401, 'every session of the account is ended');
  });
});
