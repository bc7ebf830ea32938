/**
 * Signer configuration: defaults from the brief, the PIN never serialisable, every bad variable named.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  loadSignerConfig,
  SignerConfigError,
  type BackendConfig,
  type Pkcs11BackendConfig,
} from '../../../signer/config/signer-config.js';
import {
  DEFAULT_SOLANA_INVARIANTS,
  SOLANA_DEVNET,
  SOLANA_MAINNET,
  SOLANA_USDC_MINTS,
} from '../../../signer/config/solana-invariants.js';

const base = { TREASURY_SIGNER_SOCKET: '/tmp/treasury-signer-test.sock', TREASURY_PKCS11_PIN: 'secret-pin-42' };
/** `env` is refused with an error whose message matches `pattern` (or contains it) and never holds the PIN. */
const refused = (env: Record<string, string>, pattern: RegExp | string, message?: string) =>
  assert.throws(
    () => loadSignerConfig({ ...env }),
    (e: unknown) =>
      e instanceof SignerConfigError &&
      (typeof pattern === 'string' ? e.message.includes(pattern) : pattern.test(e.message)) &&
      !e.message.includes('secret-pin-42'),
    message,
  );
/** Each bad value of each variable, set on `env`, is refused with an error that names the variable. */
const refusedNaming = (env: Record<string, string>, bad: Record<string, readonly string[]>) => {
  for (const [name, values] of Object.entries(bad))
    for (const value of values) refused({ ...env, [name]: value }, name, `${name}=${value}`);
};

/** Values each backend's configuration refuses with an error naming the variable, by variable name. */
const BAD_VALUES = {
  pkcs11: {
    TREASURY_KEY_BACKEND: ['softhsm'],
    TREASURY_PKCS11_SESSIONS: ['0'],
    TREASURY_PKCS11_SIGN_INLINE: ['always'],
    TREASURY_SIGNER_BACKEND: ['aws-cloudhsm'],
    TREASURY_SIGNER_MAX_PER_SIGNATURE: ['-1', '10000000000000000000'],
    TREASURY_SIGNER_MAX_VALIDITY_SECONDS: ['0'],
    TREASURY_SIGNER_MAX_VALUE: ['0', '1.5'],
    TREASURY_SIGNER_METRICS_PORT: ['70000'],
    TREASURY_SIGNER_WALLET_MAX_PER_DAY: ['lots'],
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: ['0'],
    TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: ['0', '1000001', '1.5'],
    TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR: ['0', 'many'],
    UV_THREADPOOL_SIZE: ['0', '1025', 'many', '2.5'],
  },
  awsKms: {
    TREASURY_KMS_ALIAS_PREFIX: ['aws', 'a b'],
    TREASURY_KMS_DELETION_WINDOW_DAYS: ['6', '31'],
    TREASURY_KMS_ENDPOINT: ['ftp://kms.example'],
    TREASURY_KMS_REGION: ['Europe'],
    TREASURY_KMS_SIGNER_PRINCIPAL_ARN: ['role/signer'],
  },
} as const;

/** The PKCS#11 half of the backend union (these tests configure PKCS#11 unless they say otherwise). */
function p11(backend: BackendConfig): Pkcs11BackendConfig {
  assert.equal(backend.kind, 'pkcs11');
  return backend as Pkcs11BackendConfig;
}

describe('signer configuration', () => {
  it('applies the documented defaults and freezes the result', () => {
    const config = loadSignerConfig(base);
    assert.equal(config.backend.kind, 'pkcs11');
    assert.equal(p11(config.backend).modulePath, '/usr/lib/softhsm/libsofthsm2.so');
    assert.equal(p11(config.backend).tokenLabel, 'treasury');
    assert.equal(p11(config.backend).kekLabel, 'treasury-root-kek');
    assert.equal(p11(config.backend).sessions, 4);
    assert.equal(config.libuvThreads, 4);
    assert.equal(p11(config.backend).signInline, 'when_alone');
    assert.deepEqual(config.invariants.allowedTokens, [
      { chainId: 84532, address: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' },
    ]);
    assert.deepEqual(config.invariants.solana, DEFAULT_SOLANA_INVARIANTS);
    assert.equal(config.invariants.maxValue, 100_000_000n, 'at most 100 USDC in one signature');
    assert.deepEqual(
      config.walletLimits.map((l) => [l.name, l.measure, l.windowSeconds, l.max]),
      [
        ['wallet_signatures_minute', 'signatures', 60, 120n],
        ['wallet_signatures_hour', 'signatures', 3600, 3600n],
        ['wallet_amount_hour', 'amount', 3600, 250_000_000n],
        ['wallet_amount_day', 'amount', 86_400, 1_000_000_000n],
        ['wallet_receipts_minute', 'receipts', 60, 20n],
        ['wallet_receipts_hour', 'receipts', 3600, 200n],
      ],
    );
    assert.ok(Object.isFrozen(config.walletLimits) && config.walletLimits.every((l) => Object.isFrozen(l)));
    assert.equal(config.invariants.maxValiditySeconds, 86_400);
    assert.equal(config.metricsPort, undefined);
    assert.equal(config.socketMode, 0o600);
    assert.equal(loadSignerConfig({ ...base, TREASURY_SIGNER_SOCKET_MODE: '0660' }).socketMode, 0o660);
    refused({ ...base, TREASURY_SIGNER_SOCKET_MODE: '0666' }, /TREASURY_SIGNER_SOCKET_MODE/);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.backend) && Object.isFrozen(config.invariants));
  });

  it('signs for testnet tokens only unless TREASURY_SIGNER_ALLOWED_TOKENS names mainnet ones', () => {
    const byDefault = loadSignerConfig(base).invariants;
    assert.deepEqual(
      byDefault.allowedTokens.map((t) => t.chainId),
      [84532],
      'USDC on Base Sepolia only: no Base mainnet (8453) by default',
    );
    assert.deepEqual(byDefault.solana.allowedMints, [
      { network: SOLANA_DEVNET, mint: SOLANA_USDC_MINTS[SOLANA_DEVNET] },
    ]);
    assert.ok(!byDefault.solana.allowedMints.some((m) => m.network === SOLANA_MAINNET), 'no Solana mainnet mint');
    const named = loadSignerConfig({
      ...base,
      TREASURY_SIGNER_ALLOWED_TOKENS: [
        '8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        `${SOLANA_MAINNET}:${SOLANA_USDC_MINTS[SOLANA_MAINNET]}`,
      ].join(', '),
    }).invariants;
    assert.deepEqual(named.allowedTokens, [{ chainId: 8453, address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' }]);
    assert.deepEqual(named.solana.allowedMints, [{ network: SOLANA_MAINNET, mint: SOLANA_USDC_MINTS[SOLANA_MAINNET] }]);
    assert.deepEqual(
      { ...named.solana, allowedMints: [] },
      { ...DEFAULT_SOLANA_INVARIANTS, allowedMints: [] },
      'the compute and memo bounds do not depend on the list',
    );
    assert.ok(Object.isFrozen(named.solana) && Object.isFrozen(named.solana.allowedMints));
    // The list is the whole allow-list: naming EVM tokens only leaves no Solana mint.
    const evmOnly = loadSignerConfig({
      ...base,
      TREASURY_SIGNER_ALLOWED_TOKENS: '84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    });
    assert.deepEqual(evmOnly.invariants.solana.allowedMints, []);
    for (const bad of [
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvd:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1O',
      'base:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    ])
      refused({ ...base, TREASURY_SIGNER_ALLOWED_TOKENS: bad }, 'TREASURY_SIGNER_ALLOWED_TOKENS entry', bad);
  });

  it('keeps the PIN out of serialisation and logs', () => {
    const config = loadSignerConfig(base);
    assert.equal(p11(config.backend).pin, 'secret-pin-42');
    assert.ok(!JSON.stringify(config, (_k, v) => (typeof v === 'bigint' ? String(v) : v)).includes('secret-pin-42'));
    assert.ok(!Object.keys(config.backend).includes('pin'));
  });

  it('reads the PIN from a file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-config-'));
    try {
      const file = path.join(dir, 'user.pin');
      fs.writeFileSync(file, 'file-pin-1234\n', { mode: 0o600 });
      const fileEnv = { TREASURY_SIGNER_SOCKET: base.TREASURY_SIGNER_SOCKET, TREASURY_PKCS11_PIN_FILE: file };
      assert.equal(p11(loadSignerConfig(fileEnv).backend).pin, 'file-pin-1234');
      // Only the signer's user may read its PIN.
      for (const mode of [0o644, 0o640, 0o604, 0o620]) {
        fs.chmodSync(file, mode);
        refused(fileEnv, new RegExp(`readable or writable by other users \\(mode 0${mode.toString(8)}\\)`));
      }
      fs.chmodSync(file, 0o400);
      assert.equal(p11(loadSignerConfig(fileEnv).backend).pin, 'file-pin-1234');
      fs.chmodSync(file, 0o600);
      refused({ ...base, TREASURY_PKCS11_PIN_FILE: file }, /not both/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the limits from the environment, the per-signature maximum under its new or its older name', () => {
    const env = {
      ...base,
      TREASURY_SIGNER_WALLET_MAX_PER_HOUR: '7000',
      TREASURY_SIGNER_WALLET_MAX_PER_DAY: '9000',
      TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '3',
      TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: '4',
      TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: '5',
      TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR: '6',
    };
    const config = loadSignerConfig({ ...env, TREASURY_SIGNER_MAX_PER_SIGNATURE: '6000' });
    assert.equal(config.invariants.maxValue, 6000n);
    assert.deepEqual(
      config.walletLimits.map((l) => l.max),
      [3n, 4n, 7000n, 9000n, 5n, 6n],
    );
    assert.equal(loadSignerConfig({ ...env, TREASURY_SIGNER_MAX_VALUE: '500' }).invariants.maxValue, 500n);
    refused(
      { ...env, TREASURY_SIGNER_MAX_VALUE: '7001' },
      /TREASURY_SIGNER_MAX_VALUE exceeds TREASURY_SIGNER_WALLET_MAX_PER_HOUR/,
    );
  });

  it('parses overrides and names every bad variable', () => {
    const config = loadSignerConfig({
      ...base,
      TREASURY_SIGNER_ALLOWED_TOKENS: ' 1:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 ,',
      TREASURY_PKCS11_SESSIONS: '8',
      TREASURY_SIGNER_METRICS_PORT: '9464',
      TREASURY_PKCS11_SIGN_INLINE: 'never',
      UV_THREADPOOL_SIZE: '16',
    });
    assert.equal(p11(config.backend).signInline, 'never');
    assert.equal(config.libuvThreads, 16);
    assert.deepEqual(config.invariants.allowedTokens, [
      { chainId: 1, address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
    ]);
    assert.equal(p11(config.backend).sessions, 8);
    assert.equal(config.metricsPort, 9464);
    refused({ TREASURY_PKCS11_PIN: 'secret-pin-42' }, /TREASURY_SIGNER_SOCKET/);
    refused(
      { TREASURY_SIGNER_SOCKET: base.TREASURY_SIGNER_SOCKET },
      /set TREASURY_PKCS11_PIN or TREASURY_PKCS11_PIN_FILE/,
    );
    refusedNaming(base, BAD_VALUES.pkcs11);
    refused({ ...base, TREASURY_SIGNER_ALLOWED_TOKENS: ',' }, /is empty/);
    refused(
      { ...base, TREASURY_SIGNER_ALLOWED_TOKENS: '0:0x036CbD53842c5426634e7929541eC2318f3dCF7e' },
      /entry "0:0x036/,
    );
    refused({ ...base, TREASURY_SIGNER_MAX_PER_SIGNATURE: '5', TREASURY_SIGNER_MAX_VALUE: '5' }, /not both/);
    refused(
      { ...base, TREASURY_SIGNER_MAX_PER_SIGNATURE: '250000001' },
      /TREASURY_SIGNER_MAX_PER_SIGNATURE exceeds TREASURY_SIGNER_WALLET_MAX_PER_HOUR/,
    );
    refused(
      { ...base, TREASURY_SIGNER_WALLET_MAX_PER_HOUR: '1000000001' },
      /TREASURY_SIGNER_WALLET_MAX_PER_HOUR exceeds TREASURY_SIGNER_WALLET_MAX_PER_DAY/,
    );
    refused(
      { ...base, TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '3601' },
      /PER_MINUTE exceeds TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR/,
    );
    refused(
      { ...base, TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: '201' },
      /TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE exceeds TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR/,
    );
    refused({ ...base, TREASURY_SIGNER_SOCKET: '/tmp/' + 'x'.repeat(120) }, /107 bytes/);
  });

  it('configures AWS KMS from TREASURY_KEY_BACKEND=aws-kms (no PIN; credentials never from Treasury variables)', () => {
    const kmsBase = {
      TREASURY_SIGNER_SOCKET: base.TREASURY_SIGNER_SOCKET,
      TREASURY_KEY_BACKEND: 'aws-kms',
      TREASURY_KMS_REGION: 'eu-west-1',
    };
    const config = loadSignerConfig(kmsBase);
    assert.deepEqual(config.backend, {
      kind: 'aws-kms',
      region: 'eu-west-1',
      endpoint: undefined,
      signRatePerSecond: 300,
      deadlineMs: 5000,
      attemptTimeoutMs: 2000,
      deletionWindowDays: 7,
      aliasPrefix: 'treasury',
      maxInFlight: 64,
      tombstoneFile: undefined,
      signerPrincipalArn: undefined,
      adminPrincipalArn: undefined,
      cacheSize: 10_000,
    });
    assert.ok(Object.isFrozen(config.backend));
    // The older variable name still selects it; the two names must agree.
    assert.equal(
      loadSignerConfig({
        ...kmsBase,
        TREASURY_KEY_BACKEND: undefined as unknown as string,
        TREASURY_SIGNER_BACKEND: 'aws-kms',
      }).backend.kind,
      'aws-kms',
    );
    refused({ ...kmsBase, TREASURY_SIGNER_BACKEND: 'pkcs11' }, /disagree/);
    const tuned = loadSignerConfig({
      ...kmsBase,
      TREASURY_KMS_ENDPOINT: 'http://127.0.0.1:4599',
      TREASURY_KMS_SIGN_RATE_PER_SECOND: '0',
      TREASURY_KMS_DEADLINE_MS: '800',
      TREASURY_KMS_ATTEMPT_TIMEOUT_MS: '300',
      TREASURY_KMS_DELETION_WINDOW_DAYS: '30',
      TREASURY_KMS_ALIAS_PREFIX: 'acme/treasury',
    }).backend;
    assert.equal(tuned.kind, 'aws-kms');
    if (tuned.kind === 'aws-kms') {
      assert.deepEqual(
        [
          tuned.endpoint,
          tuned.signRatePerSecond,
          tuned.deadlineMs,
          tuned.attemptTimeoutMs,
          tuned.deletionWindowDays,
          tuned.aliasPrefix,
        ],
        ['http://127.0.0.1:4599', 0, 800, 300, 30, 'acme/treasury'],
      );
    }
    refused({ ...kmsBase, TREASURY_KMS_REGION: undefined as unknown as string }, /TREASURY_KMS_REGION is required/);
    refusedNaming(kmsBase, BAD_VALUES.awsKms);
    refused(
      { ...kmsBase, TREASURY_KMS_ATTEMPT_TIMEOUT_MS: '6000' },
      /TREASURY_KMS_ATTEMPT_TIMEOUT_MS exceeds TREASURY_KMS_DEADLINE_MS/,
    );
    refused(
      { ...kmsBase, TREASURY_KMS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' },
      /TREASURY_KMS_SECRET_ACCESS_KEY is not read; AWS credentials come only from the SDK's default provider chain/,
    );
    refused({ ...base, TREASURY_KMS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }, /TREASURY_KMS_ACCESS_KEY_ID is not read/);
  });

  it("keeps the policy store's watermark beside the limits state file unless named; one exact generation accepted", () => {
    const store = { ...base, TREASURY_SIGNER_DATABASE_URL: 'postgres://signer@127.0.0.1/signer' };
    assert.equal(loadSignerConfig(store).ownerPolicies?.watermarkFile, undefined);
    const beside = loadSignerConfig({ ...store, TREASURY_SIGNER_LIMITS_STATE_FILE: '/var/lib/s/limits-state.json' });
    assert.equal(beside.ownerPolicies?.watermarkFile, '/var/lib/s/store-watermark.json');
    const named = loadSignerConfig({
      ...store,
      TREASURY_SIGNER_LIMITS_STATE_FILE: '/var/lib/s/limits-state.json',
      TREASURY_SIGNER_STORE_WATERMARK_FILE: '/srv/w.json',
      TREASURY_SIGNER_ACCEPT_STORE_GENERATION: '42',
    });
    assert.deepEqual(
      [named.ownerPolicies?.watermarkFile, named.ownerPolicies?.acceptStoreGeneration],
      ['/srv/w.json', 42],
    );
    refusedNaming(store, { TREASURY_SIGNER_ACCEPT_STORE_GENERATION: ['-1', '01', 'any', '1e3', ''] });
    refused({ ...base, TREASURY_SIGNER_ACCEPT_STORE_GENERATION: '3' }, /needs TREASURY_SIGNER_DATABASE_URL/);
    refused({ ...base, TREASURY_SIGNER_STORE_WATERMARK_FILE: '/srv/w.json' }, /needs TREASURY_SIGNER_DATABASE_URL/);
  });
});
