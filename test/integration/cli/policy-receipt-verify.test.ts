/**
 * `xx wallet policy verify` — the real binary against a real test Treasury (HTTP, PostgreSQL, SoftHSM, the signer with
 * its own policy store) reached through a loopback HTTP proxy that plays a compromised API: it may answer a request
 * itself, or rewrite an answer, before the CLI sees it.
 * (a) honest: after `xx init` signed version 1, the receipt verifies `in_force` against the CLI's own record;
 * (b) the audit's F1: `xx wallet policy set` signs version 2, the API withholds it from the signer and answers that it
 *     applied it — `verify` says `withheld` and exits 1, while the signer indeed still holds version 1;
 * (c) a receipt the API edited (its statement says version 2) fails: it does not recover to the wallet's address;
 * (d) a receipt replayed from an earlier run (another nonce) fails, though its signature is genuine;
 * and without a local record, verify needs the address from the owner (exit 2), never the API's.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { startTamperingProxy } from './tampering-proxy.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';

describe('xx wallet policy verify: receipts signed by the wallet key (CLI subprocess, HTTP, SoftHSM)', function () {
  this.timeout(240_000);
  let proxy: Awaited<ReturnType<typeof startTamperingProxy>>;
  let t: TestTreasury;
  let env: ReturnType<typeof xxHomeFor>;
  let init: any;
  let walletId: string;
  /** A genuine receipt as the API answered it in (a), replayed in (d). */
  let captured: string | undefined;

  before(async () => {
    proxy = await startTamperingProxy();
    t = await startTestTreasury({ extraEnv: { TREASURY_PUBLIC_URL: proxy.url, TREASURY_AUTH_CACHE_MS: '0' } });
    proxy.target(Number(new URL(t.baseUrl).port));
    env = xxHomeFor('policy-verify', proxy.url, PASSPHRASE);
    init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    walletId = init.wallets[0].id;
  });
  afterEach(() => proxy.reset());
  after(async () => {
    await proxy?.close();
    await t?.stop();
  });

  /** The CLI's record of the last document it signed for the wallet (src/cli/commands/account/signed-policy-record.ts). */
  const recordFile = () => path.join(env.HOME, '.xx', 'signed-policies', `${walletId}.json`);
  const isReceipt = (method: string, url: string) => method === 'GET' && url.includes('/policy/receipt?');

  it('(a) in force: the receipt recovers to the address init signed for, at the version signed', async () => {
    const record = JSON.parse(fs.readFileSync(recordFile(), 'utf8'));
    assert.equal(record.address, init.wallets[0].address);
    assert.equal(record.version, 1);
    proxy.set((method, url) => (isReceipt(method, url) ? { rewrite: (text) => (captured = text) } : {}));
    const out = stdoutJson(await runXx(['wallet', 'policy', 'verify', '--json'], env), 'wallet policy verify');
    assert.deepEqual(
      [out.status, out.compared_with, out.address_source, out.signer.version, out.expected.version],
      ['in_force', 'local_record', 'local_record', 1, 1],
    );
    assert.equal(out.signer.policy_hash, record.policy_hash);
    assert.equal(out.signer.authority.address.toLowerCase(), init.addresses.base.toLowerCase());
    assert.ok(captured);
  });

  it('(d) a receipt replayed from before fails on its nonce', async () => {
    proxy.set((method, url) => (isReceipt(method, url) ? { answer: JSON.parse(captured!) } : {}));
    const run = await runXx(['wallet', 'policy', 'verify', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const err = stderrJson(run, 'replayed');
    assert.deepEqual([err.error_code, err.details.reason], ['policy_receipt_invalid', 'nonce']);
  });

  it('(c) a receipt the API edited fails: it does not recover to the wallet address', async () => {
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
    const run = await runXx(['wallet', 'policy', 'verify', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const err = stderrJson(run, 'edited');
    assert.deepEqual([err.error_code, err.details.reason], ['policy_receipt_invalid', 'signature']);
  });

  it('(b) F1: a tightening the API withholds while answering "applied" is detected as withheld', async () => {
    // The compromised API keeps the signed document and answers as if the signer had taken it.
    let withheld: any;
    proxy.set((method, url, body) => {
      if (method !== 'PUT' || !url.endsWith('/policy/signed')) return {};
      withheld = JSON.parse(body);
      const policy = walletPolicySchema.parse(withheld.policy);
      return {
        answer: {
          wallet_id: walletId,
          policy: withheld.policy,
          owner_policy: {
            state: 'owner_signed',
            authority: { kind: 'owner', address: init.addresses.base },
            version: withheld.version,
            policy_hash: policyDocumentHash(policy),
            issued_at: withheld.issued_at,
            next_version: withheld.version + 1,
          },
        },
      };
    });
    const set = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--max-per-payment', '0.5', '--json'], env),
      'wallet policy set',
    );
    assert.equal(set.owner_policy.version, 2, 'the owner is told version 2 applied');
    assert.equal(withheld.version, 2);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: init.wallets[0].address });
    assert.equal(held.current?.version, 1, 'the signer never got it');
    proxy.reset();

    const run = await runXx(['wallet', 'policy', 'verify', walletId, '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual([out.status, out.signer.version, out.expected.version], ['withheld', 1, 2]);
    assert.equal(stderrJson(run, 'withheld').error_code, 'policy_withheld');
    const text = await runXx(['wallet', 'policy', 'verify', walletId], env);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /status: +withheld/);
  });

  it('without a local record it needs the address from the owner, never the API', async () => {
    fs.rmSync(recordFile());
    const run = await runXx(['wallet', 'policy', 'verify', walletId, '--json'], env);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(stderrJson(run, 'no record').error_code, 'wallet_address_unknown');
    // With the owner's word for the address, compared with what the API claims (the signer's own version 1).
    const out = stdoutJson(
      await runXx(['wallet', 'policy', 'verify', walletId, '--address', init.wallets[0].address, '--json'], env),
      'verify --address',
    );
    assert.deepEqual([out.status, out.compared_with, out.address_source], ['in_force', 'api', 'flag']);
  });
});
