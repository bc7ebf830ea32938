/**
 * src/cli/core/open-browser.ts: only an absolute http(s) URL reaches the opener, as its one argument and
 * without a shell; nothing opens without a terminal or in CI; each platform's opener; an opener that cannot
 * start (absent) resolves false; the opener inherits no XX_* or TREASURY_* variable. The real `xx fund --testnet` on a pseudo-terminal is in
 * test/integration/cli/account-flow.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { browsableUrl, openInBrowser, type OpenBrowserEnv } from '../../../src/cli/core/open-browser.js';

interface Call {
  command: string;
  args: readonly string[];
  options: Record<string, unknown>;
}

function host(overrides: Partial<OpenBrowserEnv> = {}, outcome: 'spawn' | 'error' = 'spawn') {
  const calls: Call[] = [];
  const fake = ((command: string, args: readonly string[], options: Record<string, unknown>) => {
    calls.push({ command, args, options });
    const child = Object.assign(new EventEmitter(), { unref: () => undefined });
    setImmediate(() => child.emit(outcome, outcome === 'error' ? new Error('ENOENT') : undefined));
    return child;
  }) as unknown as typeof spawn;
  return { calls, env: { isTTY: true, env: {}, platform: 'linux', spawn: fake, ...overrides } as OpenBrowserEnv };
}

describe('open-browser', () => {
  it('hands an https URL to xdg-open as its one argument, without a shell', async () => {
    const { calls, env } = host();
    assert.equal(await openInBrowser('https://faucet.circle.com/?network=base-sepolia&address=0xabc', env), true);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.command, 'xdg-open');
    assert.deepEqual(calls[0]!.args, ['https://faucet.circle.com/?network=base-sepolia&address=0xabc']);
    assert.equal(calls[0]!.options.shell, false);
  });

  it('uses open on macOS and explorer on Windows', async () => {
    for (const [platform, opener] of [
      ['darwin', 'open'],
      ['win32', 'explorer'],
    ] as const) {
      const { calls, env } = host({ platform });
      assert.equal(await openInBrowser('http://127.0.0.1:8080/x', env), true);
      assert.equal(calls[0]!.command, opener);
    }
  });

  it('never hands the opener anything but an absolute http(s) URL', async () => {
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      '--help',
      '-a Calculator',
      'faucet.circle.com',
      '/relative',
      'https://exa mple.com/',
      'data:text/html,<script>1</script>',
      '',
    ]) {
      const { calls, env } = host();
      assert.equal(await openInBrowser(url, env), false, url);
      assert.equal(calls.length, 0, url);
      assert.equal(browsableUrl(url), undefined, url);
    }
    // A URL with shell metacharacters is passed as one (encoded) argument; no shell reads it.
    const { calls, env } = host();
    assert.equal(await openInBrowser('https://example.com/?a=1;rm -rf ~&b=$(id)', env), true);
    assert.equal(calls[0]!.args.length, 1);
    assert.equal(calls[0]!.args[0], 'https://example.com/?a=1;rm%20-rf%20~&b=$(id)');
  });

  it('opens nothing without a terminal or in CI', async () => {
    for (const overrides of [
      { isTTY: false },
      { env: { CI: 'true' } },
      { env: { CI: '1' } },
      { env: { CI: 'github' } },
    ]) {
      const { calls, env } = host(overrides);
      assert.equal(await openInBrowser('https://example.com/', env), false, JSON.stringify(overrides));
      assert.equal(calls.length, 0);
    }
    for (const ci of ['false', '0', '']) {
      const { calls, env } = host({ env: { CI: ci } });
      assert.equal(await openInBrowser('https://example.com/', env), true, `CI=${ci}`);
      assert.equal(calls.length, 1);
    }
  });

  it("starts the opener without the CLI's XX_* and TREASURY_* variables (secrets would outlive the command in the browser)", async () => {
    const names = ['XX_KEYSTORE_PASSPHRASE', 'XX_PAT', 'XX_MNEMONIC', 'xx_pat', 'TREASURY_MASTER_KEY'] as const;
    const saved = names.map((n) => [n, process.env[n]] as const);
    try {
      for (const n of names) process.env[n] = 'secret';
      // The CLI's environment as a terminal user has it (outside CI, where nothing is opened at all).
      const { calls, env } = host({ env: { ...process.env, CI: undefined } });
      assert.equal(await openInBrowser('https://example.com/', env), true);
      const childEnv = calls[0]!.options.env as NodeJS.ProcessEnv | undefined;
      assert.ok(childEnv, 'the opener gets an environment of its own, not the CLI’s');
      assert.deepEqual(
        Object.keys(childEnv).filter((k) => /^(XX|TREASURY)_/i.test(k)),
        [],
        'no XX_* or TREASURY_* variable reaches the browser',
      );
      assert.equal(childEnv.PATH, process.env.PATH, 'the rest is inherited (the opener finds the browser)');
    } finally {
      for (const [n, v] of saved) {
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
      }
    }
  });

  it('resolves false when the opener cannot start', async () => {
    assert.equal(await openInBrowser('https://example.com/', host({}, 'error').env), false);
    // The real spawn, with an opener on no PATH.
    const real: OpenBrowserEnv = {
      isTTY: true,
      env: {},
      platform: 'linux',
      spawn: ((c: string, a: string[], o: object) =>
        spawn(c, a, { ...o, env: { PATH: '/nonexistent' } })) as unknown as typeof spawn,
    };
    assert.equal(await openInBrowser('https://example.com/', real), false);
  });
});
