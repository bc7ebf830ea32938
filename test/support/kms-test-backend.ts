/**
 * The AWS KMS half of the test harness: with TREASURY_TEST_KEY_BACKEND=aws-kms, test signers
 * (./signer-harness.ts) run on the AWS KMS key backend against one KMS emulator (ops/kms-emulator/, a test
 * double) shared by the whole test process, so a signer restarted on the same directory finds its keys
 * again, as it would in AWS. The signer reaches it through TREASURY_KMS_ENDPOINT and the emulator's public
 * test credentials in AWS_* variables (the SDK's default chain); the developer's own AWS profile, session
 * token, role and endpoint variables are kept from it, so a test never reaches a real account.
 * TREASURY_TEST_KEY_BACKEND unset or pkcs11: SoftHSM, as before.
 */
import path from 'node:path';
import { pino } from 'pino';
import { startKmsEmulator, type KmsEmulator } from '../../ops/kms-emulator/kms-emulator.js';

export type TestKeyBackend = 'pkcs11' | 'aws-kms';

/** The backend test signers use (TREASURY_TEST_KEY_BACKEND, default pkcs11). */
export function testKeyBackend(): TestKeyBackend {
  const raw = process.env.TREASURY_TEST_KEY_BACKEND ?? 'pkcs11';
  if (raw !== 'pkcs11' && raw !== 'aws-kms')
    throw new Error(`TREASURY_TEST_KEY_BACKEND must be pkcs11 or aws-kms, not ${raw}`);
  return raw;
}

export { AWS_VARIABLES_STEERING_AWAY_FROM_THE_EMULATOR as AWS_VARIABLES_KEPT_FROM_TEST_SIGNERS } from '../../ops/kms-emulator/steering-aws-variables.js';

let shared: Promise<KmsEmulator> | undefined;

/** The test process's one KMS emulator, started on first use. */
export function sharedKmsEmulator(): Promise<KmsEmulator> {
  shared ??= startKmsEmulator({ logger: pino({ level: 'silent' }) });
  return shared;
}

export async function stopSharedKmsEmulator(): Promise<void> {
  const running = shared;
  shared = undefined;
  if (running) await (await running).close();
}

/** The signer environment for the AWS KMS backend on the shared emulator; tombstones kept in `dir`. */
export async function kmsTestSignerEnv(dir: string): Promise<Record<string, string>> {
  const kms = await sharedKmsEmulator();
  const client = kms.clientEnv();
  return {
    TREASURY_KEY_BACKEND: 'aws-kms',
    TREASURY_KMS_REGION: kms.region,
    TREASURY_KMS_ENDPOINT: kms.url,
    TREASURY_KMS_TOMBSTONE_FILE: path.join(dir, 'kms-tombstones.json'),
    AWS_REGION: client.AWS_REGION!,
    AWS_ACCESS_KEY_ID: client.AWS_ACCESS_KEY_ID!,
    AWS_SECRET_ACCESS_KEY: client.AWS_SECRET_ACCESS_KEY!,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}
