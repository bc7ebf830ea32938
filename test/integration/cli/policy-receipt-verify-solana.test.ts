/**
 * `xx wallet policy verify` on a Solana wallet — the real binary against a real test Treasury (HTTP, PostgreSQL,
 * SoftHSM Ed25519 keys, the signer with its own policy store) reached through a loopback HTTP proxy that plays a
 * compromised API. The receipt is the wallet key's Ed25519 signature of a Solana off-chain message holding the
 * statement (signer/solana/policy-receipt-message.ts), relayed by GET /v1/wallets/{id}/policy/receipt as
 * `solana_offchain`; the CLI rebuilds the bytes from the statement and the base58 address it signed for.
 * (a) honest: after `xx wallet policy set` signed version 1 of the Solana wallet's policy, the receipt verifies
 *     `in_force` against the CLI's own record;
 * (b) `xx wallet policy set` signs version 2, the API withholds it from the signer and answers that it applied it —
 *     `verify` says `withheld` and exits 1, while the signer indeed still holds version 1;
 * (c) a receipt the API edited fails its signature, and one replayed from before fails its nonce.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { startTamperingProxy, withholdSignedPolicy } from './tampering-proxy.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';

describe('xx wallet policy verify on a Solana wallet: off-chain message receipts (CLI subprocess, HTTP, SoftHSM)', function () {
  this.timeout(240_000);
  let proxy: Awaited<ReturnType<typeof startTamperingProxy>>;
  let solana: LocalSolana;
  let t: TestTreasury;
  let env: ReturnType<typeof xxHomeFor>;
  let init: any;
  let wallet: { id: string; address: string };
  /** A genuine receipt as the API answered it in (a), replayed in (c). */
  let captured: string | undefined;

  before(async () => {
    proxy = await startTamperingProxy();
    // The offline Solana chain: it makes solana-devnet a chain this Treasury serves (nothing is paid here).
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_PUBLIC_URL: proxy.url,
        TREASURY_AUTH_CACHE_MS: '0',
        TREASURY_SOLANA_RPC_URL: solana.rpcUrl,
        TREASURY_RPC_TIMEOUT_MS: '20000',
      },
    });
    proxy.target(Number(new URL(t.baseUrl).port));
    env = xxHomeFor('policy-verify-solana', proxy.url, PASSPHRASE);
    init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    const added = stdoutJson(
      await runXx(['agent', 'wallets', 'add', '--chain', 'solana-devnet', '--json'], env),
      'agent wallets add --chain solana-devnet',
    );
    assert.match(added.network, /^solana:/);
    wallet = { id: added.id, address: added.address };
  });
  afterEach(() => proxy.reset());
  after(async () => {
    await proxy?.close();
    await t?.stop();
    await solana?.stop();
  });

  const recordFile = () => path.join(env.HOME, '.xx', 'signed-policies', `${wallet.id}.json`);
  const isReceipt = (method: string, url: string) => method === 'GET' && url.includes('/policy/receipt?');
  const verify = () => runXx(['wallet', 'policy', 'verify', wallet.id, '--json'], env);

  it('(a) in force: the off-chain receipt verifies under the base58 address the CLI signed for', async () => {
    stdoutJson(
      await runXx(['wallet', 'policy', 'set', wallet.id, '--max-per-payment', '5', '--json'], env),
      'wallet policy set (version 1)',
    );
    const record = JSON.parse(fs.readFileSync(recordFile(), 'utf8'));
    assert.deepEqual([record.address, record.version], [wallet.address, 1]);
    proxy.set((method, url) => (isReceipt(method, url) ? { rewrite: (text) => (captured = text) } : {}));
    const out = stdoutJson(await verify(), 'wallet policy verify');
    assert.deepEqual(
      [out.status, out.compared_with, out.address, out.signer.wallet, out.signer.version, out.expected.version],
      ['in_force', 'local_record', wallet.address, wallet.address, 1, 1],
    );
    assert.equal(out.signer.policy_hash, record.policy_hash);
    assert.equal(out.signer.authority.address.toLowerCase(), init.addresses.base.toLowerCase());
    assert.equal(JSON.parse(captured!).scheme, 'solana_offchain');
  });

  it('(c) a receipt the API edited fails its signature; one replayed from before fails its nonce', async () => {
    proxy.set((method, url) =>
      isReceipt(method, url)
        ? {
            rewrite: (text) => {
              const body = JSON.parse(text);
              body.statement = body.statement.replace('version: 1', 'version: 2');
              return JSON.stringify(body);
            },
          }
        : {},
    );
    const edited = await verify();
    assert.equal(edited.code, 1, edited.stderr);
    const err = stderrJson(edited, 'edited');
    assert.deepEqual([err.error_code, err.details.reason], ['policy_receipt_invalid', 'signature']);

    proxy.set((method, url) => (isReceipt(method, url) ? { answer: JSON.parse(captured!) } : {}));
    const replayed = await verify();
    assert.equal(replayed.code, 1, replayed.stderr);
    assert.deepEqual(
      [stderrJson(replayed, 'replayed').error_code, stderrJson(replayed, 'replayed').details.reason],
      ['policy_receipt_invalid', 'nonce'],
    );
  });

  it('(b) a tightening the API withholds while answering "applied" is detected as withheld', async () => {
    const withheld = withholdSignedPolicy(proxy, wallet.id, init.addresses.base);
    const set = stdoutJson(
      await runXx(['wallet', 'policy', 'set', wallet.id, '--max-per-payment', '0.5', '--json'], env),
      'wallet policy set (version 2, withheld)',
    );
    assert.equal(set.owner_policy.version, 2, 'the owner is told version 2 applied');
    assert.equal(withheld.body.version, 2);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: wallet.address });
    assert.equal(held.current?.version, 1, 'the signer never got it');
    proxy.reset();

    const run = await verify();
    assert.equal(run.code, 1, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual([out.status, out.signer.version, out.expected.version], ['withheld', 1, 2]);
    assert.equal(stderrJson(run, 'withheld').error_code, 'policy_withheld');
  });
});
