/**
 * The CLI's half of an owner-signed policy, without a server: the document `xx wallet policy set` and `xx init`
 * sign (the `policy_text` form, named in the body) recovers to the seed's key over exactly the policy, wallet and
 * version given (and over nothing else);
 * a key that is not the wallet's recorded authority is refused before anything is signed; an owner who signed in
 * with Solana signs the Ed25519 statement of the same document with the seed's Solana key; the policy `set`
 * builds from `--file` and the per-rule flags (`--key-destruction` included) is the checked, canonical one, and a
 * bad one exits 2 naming the flag before the current policy is read; the API's copy of an owner-signed policy is
 * built on only when it hashes to the signer's (`policy_copy_mismatch` otherwise).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { hexToBytes, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyStatementBytes } from '../../../policy/policy-statement.js';
import { policyDocumentHash, policyTextTypedData, policyTypedData } from '../../../policy/signed-policy.js';
import type { OwnerPolicy } from '../../../src/shared/api-responses/pay-responses.js';
import { describeAuthority, describeOwnerPolicy } from '../../../src/shared/describe-owner-policy.js';
import {
  checkPolicyAuthority,
  policyKeyFor,
  signPolicyBody,
  signPolicyStatement,
} from '../../../src/cli/commands/account/owner-signed-policy.js';
import { provenPolicyCopy } from '../../../src/cli/commands/account/policy-copy.js';
import { policyFromFlags } from '../../../src/cli/commands/account/wallet-policy-commands.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const WALLET = '0x209693bc6afc0c5328ba36faf03c514ef312287c';
const owner = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey());

const ownerPolicy = (o: Partial<OwnerPolicy> = {}): OwnerPolicy => ({
  state: 'ceilings_only',
  authority: { kind: 'owner', address: owner.address },
  version: null,
  policy_hash: null,
  issued_at: null,
  next_version: 1,
  ...o,
});

describe('xx: the owner-signed policy document (unit)', () => {
  it('signs the policy for the wallet at the version given; the signature recovers to the seed key only for that document', async () => {
    const policy = { per_tx_cap_usd: '1', daily_cap_usd: '10' };
    const now = new Date('2026-11-28T22:00:00.500Z');
    const body = await signPolicyBody(owner, { walletAddress: WALLET, policy, version: 3, now });
    assert.deepEqual(
      { policy: body.policy, version: body.version, issued_at: body.issued_at, form: body.form },
      { policy, version: 3, issued_at: 1_795_903_200, form: 'policy_text' },
    );
    const signed = { wallet: WALLET, policy, version: 3, issuedAt: body.issued_at };
    const recover = (doc: typeof signed) =>
      recoverTypedDataAddress({ ...policyTextTypedData(doc), signature: body.signature as `0x${string}` });
    assert.equal(await recover(signed), owner.address);
    // The body names the text form: read as the hash form, the same signature names another key.
    const asHash = await recoverTypedDataAddress({
      ...policyTypedData(signed),
      signature: body.signature as `0x${string}`,
    });
    assert.notEqual(asHash, owner.address);
    // Any other policy, version or wallet is another document: the signature names another key.
    for (const changed of [
      { ...signed, policy: { ...policy, per_tx_cap_usd: '2' } },
      { ...signed, version: 4 },
      { ...signed, wallet: other.address },
    ])
      assert.notEqual(await recover(changed), owner.address);
  });

  it('refuses a key that is not the recorded authority before signing, and lets an unbound wallet through', () => {
    assert.doesNotThrow(() => checkPolicyAuthority(ownerPolicy(), owner.address.toLowerCase()));
    assert.doesNotThrow(() => checkPolicyAuthority(ownerPolicy({ authority: null }), owner.address));
    for (const authority of [
      { kind: 'owner' as const, address: other.address },
      { kind: 'approver' as const, address: null },
      { kind: 'approver' as const, address: other.address },
    ]) {
      assert.throws(
        () => checkPolicyAuthority(ownerPolicy({ authority }), owner.address),
        (err: unknown) => err instanceof CliError && err.code === 'policy_authority_mismatch',
      );
    }
  });

  it("signs with the seed's Solana key when it is the authority (the Ed25519 statement), else with its Base key", () => {
    const secretKey = ed25519.utils.randomSecretKey();
    const solana = { address: base58.encode(ed25519.getPublicKey(secretKey)), secretKey };
    const keys = { evm: owner, solana };
    const solanaOwned = ownerPolicy({ authority: { kind: 'owner', address: solana.address } });
    assert.equal(policyKeyFor(solanaOwned, keys), 'solana');
    assert.equal(policyKeyFor(ownerPolicy(), keys), 'evm');
    assert.equal(policyKeyFor(ownerPolicy({ authority: null }), keys), 'evm', 'an unbound wallet: EIP-712 binds a key');
    assert.throws(
      () => policyKeyFor(solanaOwned, { evm: owner }),
      (err: unknown) => err instanceof CliError && err.code === 'policy_authority_mismatch',
    );
    const wallet = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';
    const policy = { per_tx_cap_usd: '1' };
    const now = new Date('2026-11-30T10:00:00Z');
    const body = signPolicyStatement(solana, { walletAddress: wallet, policy, version: 2, now });
    assert.match(body.signature, /^0x[0-9a-f]{128}$/);
    const statement = (v: number) =>
      policyStatementBytes({ wallet, policy, version: v, issuedAt: Math.floor(now.getTime() / 1000) });
    const publicKey = ed25519.getPublicKey(secretKey);
    const signature = hexToBytes(body.signature as `0x${string}`);
    assert.ok(ed25519.verify(signature, statement(2), publicKey, { zip215: false }));
    assert.ok(!ed25519.verify(signature, statement(3), publicKey, { zip215: false }), 'another version: another text');
  });

  it('says who signed and which version, or that only the ceilings apply', () => {
    assert.equal(
      describeOwnerPolicy(ownerPolicy({ state: 'owner_signed', version: 2, next_version: 3 })),
      `Owner-signed by ${owner.address} (version 2)`,
    );
    assert.equal(describeOwnerPolicy(ownerPolicy()), "Not owner-signed: only the signer's ceilings apply");
    // The signer answers addresses in lower case; people read them in EIP-55 form.
    const lower = { kind: 'owner' as const, address: owner.address.toLowerCase() };
    assert.equal(
      describeOwnerPolicy(ownerPolicy({ state: 'owner_signed', authority: lower, version: 1 })),
      `Owner-signed by ${owner.address} (version 1)`,
    );
    assert.equal(describeAuthority(lower), `owner ${owner.address}`);
    assert.equal(describeAuthority(null), 'none');
  });

  it('builds the policy from --file and the per-rule flags, canonical; bad input exits 2 naming the flag', () => {
    const current = { per_tx_cap_usd: '1', daily_cap_usd: '10' };
    assert.deepEqual(policyFromFlags(current, { maxPerPayment: '2.5' }), {
      per_tx_cap_usd: '2.5',
      daily_cap_usd: '10',
    });
    assert.deepEqual(policyFromFlags(current, { dailyLimit: 'none' }), { per_tx_cap_usd: '1' });
    const file = path.join(fileTempDir('xx-policy-'), 'policy.json');
    fs.writeFileSync(file, JSON.stringify({ weekly_cap_usd: '20', counterparty_allowlist: [WALLET] }));
    assert.deepEqual(policyFromFlags(current, { file, maxPerPayment: '3' }), {
      weekly_cap_usd: '20',
      counterparty_allowlist: ['0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
      per_tx_cap_usd: '3',
    });
    const flagOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof CliError && err.exitCode === 2, String(err));
        return err.details.flag;
      }
      assert.fail('expected exit 2');
    };
    assert.equal(
      flagOf(() => policyFromFlags(current, {})),
      '--file',
    );
    assert.equal(
      flagOf(() => policyFromFlags(current, { maxPerPayment: 'ten' })),
      '--max-per-payment',
    );
    assert.equal(
      flagOf(() => policyFromFlags(current, { file: path.join(path.dirname(file), 'missing.json') })),
      '--file',
    );
    fs.writeFileSync(file, JSON.stringify({ per_tx_cap_usd: '0' }));
    assert.equal(
      flagOf(() => policyFromFlags(current, { file })),
      '--file',
    );
  });

  it('--key-destruction allow sets allow_key_destruction, refuse removes it; the current policy is read only after the flags are checked', () => {
    const current = { per_tx_cap_usd: '1' };
    assert.deepEqual(policyFromFlags(current, { keyDestruction: 'allow' }), {
      per_tx_cap_usd: '1',
      allow_key_destruction: true,
    });
    assert.deepEqual(
      policyFromFlags({ ...current, allow_key_destruction: true }, { keyDestruction: 'refuse', maxPerPayment: '2' }),
      { per_tx_cap_usd: '2' },
    );
    let read = 0;
    const reader = () => {
      read += 1;
      return current;
    };
    assert.throws(
      () => policyFromFlags(reader, { keyDestruction: 'yes' }),
      (err: unknown) => err instanceof CliError && err.exitCode === 2 && err.details.flag === '--key-destruction',
    );
    assert.equal(read, 0, 'a bad flag is refused before the current policy is read');
    assert.deepEqual(policyFromFlags(reader, { keyDestruction: 'Allow' }), { ...current, allow_key_destruction: true });
    assert.equal(read, 1);
  });

  it("builds on the API's copy of an owner-signed policy only when it hashes to the signer's (policy_copy_mismatch)", () => {
    const signed = { per_tx_cap_usd: '1', daily_cap_usd: '10' };
    const reply = (policy: Record<string, unknown>, o: Partial<OwnerPolicy>) => ({
      wallet_id: 'wal_0123',
      policy,
      owner_policy: ownerPolicy(o),
    });
    const held = { state: 'owner_signed' as const, version: 1, next_version: 2 };
    const hash = policyDocumentHash(signed);
    assert.equal(provenPolicyCopy(reply(signed, { ...held, policy_hash: hash })), signed);
    // Keys in another order are the same canonical document.
    const reordered = { daily_cap_usd: '10', per_tx_cap_usd: '1' };
    assert.equal(
      provenPolicyCopy(reply(reordered, { ...held, policy_hash: hash.toUpperCase().replace('0X', '0x') })),
      reordered,
    );
    // No signed policy: nothing to compare with, the copy is what the owner first signs.
    assert.deepEqual(provenPolicyCopy(reply({}, {})), {});
    for (const [policy, o] of [
      [
        { ...signed, allow_key_destruction: true },
        { ...held, policy_hash: hash },
      ],
      [{ per_tx_cap_usd: '0' }, { ...held, policy_hash: hash }],
      [signed, { ...held, policy_hash: null }],
    ] as const) {
      assert.throws(
        () => provenPolicyCopy(reply(policy, o)),
        (err: unknown) =>
          err instanceof CliError &&
          err.code === 'policy_copy_mismatch' &&
          err.exitCode === 1 &&
          /--file/.test(err.userMessage),
      );
    }
  });
});
