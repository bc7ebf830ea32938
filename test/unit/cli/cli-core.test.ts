/**
 * The CLI core without a Treasury: path resolution and its XX_* overrides, XX_ENV env files, 0600 atomic
 * files in 0700 directories, prompts that refuse to block without a terminal (exit 2 naming the flag), the
 * API client against real local HTTP servers (errors keep the server's code, message and recovery; a 401
 * is handed to the refresher once; network and non-JSON failures are named), the new-PAT propagation
 * wait, and error rendering (one JSON object under --json, exit codes 1, 2 and 130).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { waitForPat } from '../../../src/cli/commands/account/init-command.js';
import { ApiClient } from '../../../src/cli/core/api-client.js';
import { createCliContext } from '../../../src/cli/core/cli-context.js';
import { CliError, REAUTHENTICATE_RECOVERY } from '../../../src/cli/core/cli-error.js';
import { resolveCliPaths } from '../../../src/cli/core/cli-paths.js';
import { saveAgent, saveSession, setActiveAgent } from '../../../src/cli/core/cli-state.js';
import { renderError } from '../../../src/cli/core/run-command.js';
import { readJsonFile, writeSecretJson } from '../../../src/cli/core/secret-file.js';
import { captureStderr } from './capture-stderr.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const tmp = () => fileTempDir('xx-core-');

async function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('xx CLI core', () => {
  it('resolves every path under XX_HOME (default ~/.xx) and honours each XX_* override', () => {
    const defaults = resolveCliPaths({ HOME: '/home/u' });
    assert.equal(defaults.root, '/home/u/.xx');
    assert.equal(defaults.session, '/home/u/.xx/session.json');
    assert.equal(defaults.envDir, '/home/u/.xx/env');
    const root = resolveCliPaths({ HOME: '/home/u', XX_HOME: '/x' });
    assert.deepEqual(
      [root.credentials, root.agentsDir, root.seedsDir, root.config],
      ['/x/credentials.json', '/x/agents', '/x/seeds', '/x/config.json'],
    );
    const overrides = {
      XX_SESSION_PATH: '/o/s',
      XX_CREDENTIALS_PATH: '/o/c',
      XX_SERVICES_DIR: '/o/sd',
      XX_ACTIVE_SERVICE_PATH: '/o/as',
      XX_AGENTS_DIR: '/o/ad',
      XX_ACTIVE_AGENT_PATH: '/o/aa',
      XX_SEEDS_DIR: '/o/seeds',
      XX_CONFIG_PATH: '/o/config',
    };
    const p = resolveCliPaths({ HOME: '/home/u', ...overrides });
    assert.deepEqual(
      [p.session, p.credentials, p.servicesDir, p.activeService, p.agentsDir, p.activeAgent, p.seedsDir, p.config],
      Object.values(overrides),
    );
  });

  it('writes secret files 0600 in 0700 directories, atomically, and reads them back through a schema', () => {
    const dir = tmp();
    const file = path.join(dir, 'a', 'b', 'secret.json');
    writeSecretJson(file, { token: 'x' });
    writeSecretJson(file, { token: 'y' });
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(dir, 'a')).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(dir, 'a', 'b')).mode & 0o777, 0o700);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'a', 'b')), ['secret.json'], 'no temporary file left behind');
    const schema = z.object({ token: z.string() });
    assert.deepEqual(readJsonFile(file, schema), { token: 'y' });
    assert.equal(readJsonFile(path.join(dir, 'missing.json'), schema), undefined);
    fs.writeFileSync(file, '{not json');
    assert.throws(
      () => readJsonFile(file, schema),
      (e: unknown) => e instanceof CliError && e.code === 'corrupt_file' && e.userMessage.includes(file),
    );
    fs.writeFileSync(file, '{"token": 1}');
    assert.throws(
      () => readJsonFile(file, schema),
      (e: unknown) => e instanceof CliError && e.code === 'corrupt_file',
    );
  });

  it('loads XX_* settings from <root>/env/<XX_ENV>.env without overriding the environment, and refuses an unknown XX_ENV with exit 2', () => {
    const root = tmp();
    fs.mkdirSync(path.join(root, 'env'));
    fs.writeFileSync(
      path.join(root, 'env', 'qa.env'),
      '# qa\nXX_API_URL = "https://qa.example.test/"\nXX_DASHBOARD_URL=https://dash.qa.example.test\nNOT_XX=1\n',
    );
    const ctx = createCliContext({ json: true, env: { XX_HOME: root, XX_ENV: 'qa' } });
    assert.equal(ctx.env.name, 'qa');
    assert.equal(ctx.env.file, path.join(root, 'env', 'qa.env'));
    assert.equal(ctx.apiUrl(), 'https://qa.example.test');
    assert.equal(ctx.dashboardUrl(), 'https://dash.qa.example.test');
    const env: NodeJS.ProcessEnv = { XX_HOME: root, XX_ENV: 'qa', XX_API_URL: 'http://127.0.0.1:9' };
    assert.equal(
      createCliContext({ json: true, env }).apiUrl(),
      'http://127.0.0.1:9',
      'the environment wins over the env file',
    );
    assert.equal(env.NOT_XX, undefined, 'only XX_* keys are applied');
    assert.equal(createCliContext({ json: true, env: { XX_HOME: root } }).env.name, 'dev');
    assert.throws(
      () => createCliContext({ json: true, env: { XX_HOME: root, XX_ENV: 'staging' } }),
      (e: unknown) => e instanceof CliError && e.exitCode === 2 && e.code === 'invalid_env',
    );
  });

  it('refuses a home (XX_HOME, or ~/.xx) writable by group or others: unsafe_home, before its env file is read', () => {
    const root = tmp();
    fs.mkdirSync(path.join(root, 'env'));
    fs.writeFileSync(path.join(root, 'env', 'dev.env'), 'XX_API_URL=http://planted.example\n');
    assert.equal(createCliContext({ json: true, env: { XX_HOME: root } }).apiUrl(), 'http://planted.example');
    const unsafe = (env: NodeJS.ProcessEnv) => () => createCliContext({ json: true, env });
    const refused = (e: unknown) =>
      e instanceof CliError && e.code === 'unsafe_home' && e.exitCode === 1 && e.details.path === root;
    for (const mode of [0o770, 0o707, 0o777]) {
      fs.chmodSync(root, mode);
      assert.throws(unsafe({ XX_HOME: root }), refused, mode.toString(8));
    }
    const home = tmp();
    fs.renameSync(root, path.join(home, '.xx'));
    assert.throws(unsafe({ HOME: home }), (e: unknown) => e instanceof CliError && e.code === 'unsafe_home');
    fs.chmodSync(path.join(home, '.xx'), 0o700);
    assert.equal(createCliContext({ json: true, env: { HOME: home } }).apiUrl(), 'http://planted.example');
    assert.equal(createCliContext({ json: true, env: { XX_HOME: path.join(home, 'none-yet') } }).env.name, 'dev');
  });

  it("the reauthenticate recovery's login command takes the PAT on stdin, never in argv", () => {
    assert.equal(REAUTHENTICATE_RECOVERY.login_command, 'xx login --token -');
    assert.doesNotMatch(JSON.stringify(REAUTHENTICATE_RECOVERY), /<PAT>|xx_pat_/);
  });

  it('never prompts under --json or without a terminal: exit 2 naming the flag', async () => {
    const ctx = createCliContext({ json: true, env: { XX_HOME: tmp() } });
    assert.equal(ctx.interactive, false);
    const namesFlag = (flag: string) => (e: unknown) =>
      e instanceof CliError &&
      e.exitCode === 2 &&
      e.code === 'missing_argument' &&
      e.userMessage.includes(flag) &&
      e.details?.flag === flag;
    await assert.rejects(ctx.prompt.input({ message: 'Name', flag: '--name' }), namesFlag('--name'));
    await assert.rejects(
      ctx.prompt.password({ message: 'Passphrase', flag: 'XX_KEYSTORE_PASSPHRASE' }),
      namesFlag('XX_KEYSTORE_PASSPHRASE'),
    );
    await assert.rejects(ctx.prompt.confirm({ message: 'Sure?', flag: '--yes' }), namesFlag('--yes'));
    await assert.rejects(
      ctx.prompt.select({ message: 'Chain', flag: '--chain', choices: ['base', 'solana'] as const }),
      namesFlag('--chain'),
    );
    assert.equal(await ctx.spin('no spinner under --json', async () => 42), 42);
  });

  it('a session is needed for session calls: without one (and no agent PAT) exit 1 with the reauthenticate recovery', async () => {
    const ctx = createCliContext({ json: true, env: { XX_HOME: tmp() } });
    await assert.rejects(
      ctx.session(),
      (e: unknown) =>
        e instanceof CliError &&
        e.code === 'no_session' &&
        e.exitCode === 1 &&
        e.recovery?.kind === 'reauthenticate' &&
        e.recovery.cli_command === 'xx init',
    );
    assert.throws(
      () => ctx.agentClient(),
      (e: unknown) => e instanceof CliError && e.code === 'no_active_agent' && e.recovery?.kind === 'reauthenticate',
    );
  });

  it('ApiClient: JSON in and out with the bearer; errors keep the server error_code, user_message unchanged, recovery and status', async () => {
    const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
    const api = await serve((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
          if (req.url!.startsWith('/ok'))
            return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"fine":true}');
          if (req.url === '/csv') return void res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
          if (req.url === '/capped')
            return void res.writeHead(429, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                error_code: 'MGMT_6014',
                user_message: 'Daily cap of $1.00 reached — raise it in settings.',
                request_id: 'req_1',
                recovery: { kind: 'raise_pat_cap', settings_url: 'https://x/settings' },
                current_cap_usd: '1',
              }),
            );
          if (req.url === '/html')
            return void res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
          if (req.url === '/notjson')
            return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
          res.writeHead(404).end();
        });
    });
    try {
      const client = new ApiClient({ baseUrl: `${api.url}/`, token: 'xx_pat_abc' });
      assert.deepEqual(await client.request('POST', '/ok', { body: { a: 1 }, query: { limit: 5, skip: undefined } }), {
        fine: true,
      });
      assert.deepEqual(seen[0], { method: 'POST', url: '/ok?limit=5', auth: 'Bearer xx_pat_abc', body: '{"a":1}' });
      assert.equal(await client.request('GET', '/csv', { raw: true }), 'a,b\n1,2\n');
      await assert.rejects(client.request('POST', '/capped'), (e: unknown) => {
        assert.ok(e instanceof CliError);
        assert.equal(e.code, 'MGMT_6014');
        assert.equal(e.userMessage, 'Daily cap of $1.00 reached — raise it in settings.');
        assert.equal(e.status, 429);
        assert.deepEqual(e.recovery, { kind: 'raise_pat_cap', settings_url: 'https://x/settings' });
        assert.deepEqual(e.details, { current_cap_usd: '1' });
        assert.equal(e.exitCode, 1);
        return true;
      });
      await assert.rejects(
        client.request('GET', '/html'),
        (e: unknown) => e instanceof CliError && e.code === 'http_502' && e.status === 502,
      );
      await assert.rejects(
        client.request('GET', '/notjson'),
        (e: unknown) => e instanceof CliError && e.code === 'invalid_reply',
      );
    } finally {
      await api.close();
    }
    const down = new ApiClient({ baseUrl: api.url, token: undefined });
    await assert.rejects(
      down.request('GET', '/ok'),
      (e: unknown) => e instanceof CliError && e.code === 'network_error' && e.userMessage.includes(api.url),
    );
  });

  it('ApiClient: a 401 goes to the refresher once and the call is retried with the new token; a second 401 is the error', async () => {
    const valid = new Set(['as_new']);
    const auths: string[] = [];
    const api = await serve((req, res) => {
      auths.push(req.headers.authorization ?? '');
      const ok = valid.has((req.headers.authorization ?? '').replace('Bearer ', ''));
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(
        ok
          ? '{"ok":true}'
          : JSON.stringify({
              error_code: 'invalid_token',
              user_message: 'Unknown, expired or revoked token.',
              recovery: { kind: 'reauthenticate' },
            }),
      );
    });
    try {
      let refreshes = 0;
      const client = new ApiClient({
        baseUrl: api.url,
        token: 'as_old',
        onUnauthorized: async () => (refreshes++, 'as_new'),
      });
      assert.deepEqual(await client.request('GET', '/x'), { ok: true });
      assert.deepEqual(await client.request('GET', '/y'), { ok: true }, 'the new token is kept');
      assert.equal(refreshes, 1);
      assert.deepEqual(auths, ['Bearer as_old', 'Bearer as_new', 'Bearer as_new']);

      const stubborn = new ApiClient({
        baseUrl: api.url,
        token: 'as_old',
        onUnauthorized: async () => (refreshes++, 'as_also_bad'),
      });
      await assert.rejects(
        stubborn.request('GET', '/z'),
        (e: unknown) => e instanceof CliError && e.status === 401 && e.code === 'invalid_token',
      );
      assert.equal(refreshes, 2, 'refreshed once, not in a loop');
      const giveUp = new ApiClient({ baseUrl: api.url, token: 'as_old', onUnauthorized: async () => undefined });
      await assert.rejects(giveUp.request('GET', '/z'), (e: unknown) => e instanceof CliError && e.status === 401);
    } finally {
      await api.close();
    }
  });

  it('session(): exchanges the agent PAT when the session is missing, expired, of another account, or refused; a refused PAT is reauthenticate', async () => {
    const agentId = `agt_${'a'.repeat(24)}`;
    let issued = 0;
    let patValid = true;
    const sessions = new Set<string>();
    const api = await serve((req, res) => {
      const bearer = (req.headers.authorization ?? '').replace('Bearer ', '');
      const reply = (status: number, body: unknown) =>
        void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/v1/identity/exchange-pat') {
        if (bearer !== 'xx_pat_agent' || !patValid)
          return reply(401, { error_code: 'invalid_token', user_message: 'Unknown, expired or revoked token.' });
        const session = `as_${++issued}`;
        sessions.add(session);
        return reply(200, {
          session,
          account_id: 'acc_1',
          agent_id: agentId,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          created: false,
        });
      }
      if (sessions.has(bearer)) return reply(200, { pats: [] });
      reply(401, { error_code: 'invalid_token', user_message: 'Unknown, expired or revoked token.' });
    });
    try {
      const home = tmp();
      const ctx = createCliContext({ json: true, env: { XX_HOME: home } });
      saveAgent(ctx.paths, {
        agent_id: agentId,
        account_id: 'acc_1',
        label: 'a',
        server: api.url,
        pat: 'xx_pat_agent',
        pat_id: `pat_${'b'.repeat(24)}`,
        addresses: {},
        wallets: [],
        created_at: new Date().toISOString(),
      });
      setActiveAgent(ctx.paths, agentId);
      const sessionFile = () => JSON.parse(fs.readFileSync(ctx.paths.session, 'utf8'));
      const future = new Date(Date.now() + 3600_000).toISOString();

      // No session file: exchanged before the call, saved 0600.
      assert.deepEqual(await (await ctx.session()).request('GET', '/v1/pats'), { pats: [] });
      assert.deepEqual([issued, sessionFile().session, sessionFile().server], [1, 'as_1', api.url]);
      assert.equal(fs.statSync(ctx.paths.session).mode & 0o777, 0o600);
      // Past its expires_at, or of another account: exchanged before the call.
      saveSession(ctx.paths, { ...sessionFile(), expires_at: new Date(Date.now() - 1000).toISOString() });
      await (await ctx.session()).request('GET', '/v1/pats');
      assert.equal(issued, 2);
      saveSession(ctx.paths, { ...sessionFile(), account_id: 'acc_other' });
      await (await ctx.session()).request('GET', '/v1/pats');
      assert.equal(issued, 3);
      // Valid on disk but refused by the server: exchanged on the 401 and retried once.
      saveSession(ctx.paths, { ...sessionFile(), session: 'as_unknown', expires_at: future });
      await (await ctx.session()).request('GET', '/v1/pats');
      assert.deepEqual([issued, sessionFile().session], [4, 'as_4']);
      // The PAT is revoked: exit 1, reauthenticate with its recovery fields (docs/api.md#errors).
      patValid = false;
      saveSession(ctx.paths, { ...sessionFile(), session: 'as_unknown' });
      await assert.rejects((await ctx.session()).request('GET', '/v1/pats'), (e: unknown) => {
        assert.ok(e instanceof CliError);
        assert.deepEqual(
          [e.code, e.exitCode, e.recovery],
          [
            'reauthenticate',
            1,
            { kind: 'reauthenticate', cli_command: 'xx init', login_command: 'xx login --token -' },
          ],
        );
        return true;
      });
    } finally {
      await api.close();
    }
  });

  it('waits out a new PAT that answers 401 while it propagates, with backoff', async () => {
    let calls = 0;
    const api = await serve((_req, res) => {
      calls++;
      res
        .writeHead(calls < 3 ? 401 : 200, { 'content-type': 'application/json' })
        .end(calls < 3 ? '{"error_code":"invalid_token","user_message":"no"}' : '{"auth_type":"pat"}');
    });
    try {
      const started = Date.now();
      await waitForPat(new ApiClient({ baseUrl: api.url, token: 'xx_pat_new' }));
      assert.equal(calls, 3);
      assert.ok(Date.now() - started >= 250 + 500, 'backed off between tries');
    } finally {
      await api.close();
    }
  });

  it('renders errors: one JSON object on stderr under --json, a readable line otherwise; exit 1, 2 and 130', () => {
    const apiError = new CliError({
      code: 'invalid_token',
      userMessage: 'Unknown token.',
      status: 401,
      recovery: { kind: 'reauthenticate', cli_command: 'xx init' },
    });
    const json = captureStderr(() => renderError(apiError, true));
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.text), {
      error_code: 'invalid_token',
      user_message: 'Unknown token.',
      recovery: { kind: 'reauthenticate', cli_command: 'xx init' },
      status: 401,
    });
    assert.equal(json.text.trim().split('\n').length, 1);
    const human = captureStderr(() => renderError(apiError, false));
    assert.match(human.text, /^Error: Unknown token\. \(invalid_token, HTTP 401\)\nSign in again/);

    assert.equal(
      captureStderr(() =>
        renderError(new CliError({ code: 'missing_argument', userMessage: '--name is required', exitCode: 2 }), true),
      ).code,
      2,
    );
    const interrupted = Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
    const ctrlC = captureStderr(() => renderError(interrupted, true));
    assert.equal(ctrlC.code, 130);
    assert.equal(JSON.parse(ctrlC.text).error_code, 'interrupted');
    const unexpected = captureStderr(() => renderError(new TypeError('boom'), true));
    assert.deepEqual([unexpected.code, JSON.parse(unexpected.text).error_code], [1, 'internal_error']);
  });
});
