/**
 * The buyer commands' one credential resolver (src/cli/core/buyer-bearer.ts): --profile > XX_PAT > the
 * active profile > the active agent, each with its server (XX_API_URL over all), the local agent record found
 * for the PAT in use, a missing --profile refused rather than skipped (a prototype key such as `constructor`
 * too; a name outside the rule, such as `__proto__`, is exit 2 naming --profile), a malformed or master-key
 * XX_PAT refused before any request; and `xx mcp --http`'s address rules (loopback unless --allow-remote; the Host
 * values the DNS-rebinding check accepts).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { findBuyerBearer, requireBuyerBearer } from '../../../src/cli/core/buyer-bearer.js';
import { createCliContext } from '../../../src/cli/core/cli-context.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import {
  loadCredentials,
  saveAgent,
  saveCredentials,
  setActiveAgent,
  type AgentRecord,
} from '../../../src/cli/core/cli-state.js';
import { allowedHostHeaders, parseListenAddress } from '../../../src/cli/commands/mcp/mcp-listen-address.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const pat = (c: string) => `xx_pat_${c.repeat(24)}`;
const AGENT_ID = `agt_${'a'.repeat(24)}`;

function agentRecord(token: string): AgentRecord {
  return {
    agent_id: AGENT_ID,
    account_id: 'acc_1',
    label: 'a',
    server: 'http://agent.server',
    pat: token,
    pat_id: `pat_${'1'.repeat(24)}`,
    addresses: {},
    wallets: [],
    created_at: new Date().toISOString(),
  };
}

function setup(env: Record<string, string> = {}) {
  const home = fileTempDir('xx-bearer-');
  const vars: NodeJS.ProcessEnv = { HOME: home, XX_HOME: path.join(home, '.xx'), ...env };
  const ctx = createCliContext({ json: true, env: vars });
  return { ctx, vars };
}

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    return [err.code, err.exitCode];
  }
  assert.fail('expected a CliError');
};

describe('buyer credentials: one resolver, --profile > XX_PAT > active profile > active agent', () => {
  it('takes each source in order, with its server and the agent record holding that PAT', () => {
    const { ctx, vars } = setup();
    assert.equal(findBuyerBearer(ctx, {}, vars), undefined);
    assert.deepEqual(
      code(() => requireBuyerBearer(ctx)),
      ['no_active_agent', 1],
    );

    saveAgent(ctx.paths, agentRecord(pat('a')));
    setActiveAgent(ctx.paths, AGENT_ID);
    let b = findBuyerBearer(ctx, {}, vars)!;
    assert.deepEqual(
      [b.token, b.server, b.source.kind, b.agent?.agent_id],
      [pat('a'), 'http://agent.server', 'agent_record', AGENT_ID],
    );

    saveCredentials(ctx.paths, {
      active: 'main',
      profiles: {
        main: { token: pat('b'), server: 'http://main.server', added_at: '2026-11-26T00:00:00.000Z' },
        ci: { token: pat('a'), server: 'http://ci.server', added_at: '2026-11-26T00:00:00.000Z' },
      },
    });
    b = findBuyerBearer(ctx, {}, vars)!;
    assert.deepEqual(
      [b.token, b.server, b.source.kind, b.agent],
      [pat('b'), 'http://main.server', 'active_profile', undefined],
    );

    vars.XX_PAT = pat('c');
    b = findBuyerBearer(ctx, {}, vars)!;
    assert.deepEqual([b.token, b.source.kind], [pat('c'), 'env']);

    b = findBuyerBearer(ctx, { profile: 'ci' }, vars)!;
    assert.deepEqual(
      [b.token, b.server, b.source.kind, b.agent?.agent_id],
      [pat('a'), 'http://ci.server', 'flag_profile', AGENT_ID],
    );
    assert.deepEqual(
      code(() => findBuyerBearer(ctx, { profile: 'nope' }, vars)),
      ['profile_not_found', 2],
      'a missing --profile is refused, not skipped',
    );

    vars.XX_API_URL = 'http://override.server/';
    assert.equal(findBuyerBearer(ctx, { profile: 'ci' }, vars)!.server, 'http://override.server');
  });

  it('refuses a malformed or master-key XX_PAT before any request', () => {
    const { ctx, vars } = setup();
    vars.XX_PAT = 'not-a-pat';
    assert.deepEqual(
      code(() => findBuyerBearer(ctx, {}, vars)),
      ['invalid_argument', 2],
    );
    vars.XX_PAT = `xx_treasury_sk_${'a'.repeat(40)}`;
    assert.equal(code(() => findBuyerBearer(ctx, {}, vars))![0], 'master_key_removed');
  });
});

describe('buyer credentials: profile names never reach the object prototype', () => {
  const profile = (c: string) => ({ token: pat(c), server: 'http://p.server', added_at: '2026-11-26T00:00:00.000Z' });

  it('--profile constructor (or any prototype key) is profile_not_found, even with XX_API_URL set', () => {
    const { ctx, vars } = setup({ XX_API_URL: 'http://override.server' });
    saveCredentials(ctx.paths, { active: 'main', profiles: { main: profile('b') } });
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf'])
      assert.deepEqual(
        code(() => findBuyerBearer(ctx, { profile: name }, vars)),
        ['profile_not_found', 2],
        name,
      );
  });

  it('a --profile outside the name rule (__proto__, a path, a space, empty) is exit 2 naming --profile', () => {
    const { ctx, vars } = setup();
    saveCredentials(ctx.paths, { active: 'main', profiles: { main: profile('b') } });
    for (const name of ['__proto__', '../main', 'a b', '', '-x', 'x'.repeat(65)]) {
      try {
        findBuyerBearer(ctx, { profile: name }, vars);
        assert.fail(`${name}: accepted`);
      } catch (err) {
        assert.ok(err instanceof CliError, String(err));
        assert.deepEqual([err.code, err.exitCode, err.details], ['invalid_argument', 2, { flag: '--profile' }], name);
      }
    }
    assert.equal(findBuyerBearer(ctx, { profile: 'main' }, vars)!.token, pat('b'));
  });

  it('profiles read from and written to the file are its own: a prototype-named one is kept, an active prototype key is none', () => {
    const { ctx, vars } = setup();
    const creds = loadCredentials(ctx.paths);
    const name: string = 'constructor'; // what `xx login --profile constructor` writes
    creds.profiles[name] = profile('d');
    saveCredentials(ctx.paths, { ...creds, active: 'toString' });
    assert.deepEqual(Object.keys(loadCredentials(ctx.paths).profiles), ['constructor']);
    assert.equal(findBuyerBearer(ctx, {}, vars), undefined, 'an active "toString" names no profile');
    assert.equal(findBuyerBearer(ctx, { profile: 'constructor' }, vars)!.token, pat('d'));
  });
});

describe('xx mcp --http address', () => {
  it('is loopback unless --allow-remote, and answers only Host values naming itself', () => {
    assert.deepEqual(parseListenAddress('127.0.0.1:0', false), { host: '127.0.0.1', port: 0, loopback: true });
    assert.deepEqual(parseListenAddress('[::1]:8765', false), { host: '::1', port: 8765, loopback: true });
    assert.equal(parseListenAddress('localhost:8765', false).loopback, true);
    for (const remote of ['0.0.0.0:8765', '192.168.1.5:80', 'example.com:80', '[::]:80'])
      assert.equal(code(() => parseListenAddress(remote, false))![0], 'non_loopback_refused', remote);
    assert.equal(parseListenAddress('0.0.0.0:8765', true).loopback, false);
    for (const bad of ['8765', '127.0.0.1', '127.0.0.1:99999', 'http://127.0.0.1:1', '127.0.0.1:1/x'])
      assert.equal(code(() => parseListenAddress(bad, false))![0], 'invalid_argument', bad);
    const hosts = allowedHostHeaders(parseListenAddress('127.0.0.1:0', false), 41000);
    assert.deepEqual([...hosts].sort(), ['127.0.0.1:41000', '[::1]:41000', 'localhost:41000']);
    assert.equal(hosts.has('evil.example:41000'), false);
    assert.equal(hosts.has('127.0.0.1:41001'), false);
  });
});
