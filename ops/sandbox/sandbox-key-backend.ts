/**
 * The signer's key backend for the sandbox, and the environment that points the signer at it: a SoftHSM token
 * and root KEK under `<data dir>/softhsm` (initialised when missing), or, with
 * TREASURY_SANDBOX_KEY_BACKEND=aws-kms, the KMS emulator (ops/kms-emulator/, a TEST DOUBLE started in this
 * process). The signer reaches the emulator through TREASURY_KMS_ENDPOINT with the emulator's public test
 * credentials in AWS_* variables (the SDK's default chain, as in production); the user's own AWS profile and
 * endpoint variables are kept from it.
 * Does not: keep keys across runs on the emulator (it holds them in its memory only, so wallets made in one run
 * cannot sign after a restart).
 */
import path from 'node:path';
import { initSoftHsmToken } from '../softhsm/init-token.js';
import { startKmsEmulator } from '../kms-emulator/kms-emulator.js';
import { AWS_VARIABLES_STEERING_AWAY_FROM_THE_EMULATOR as AWS_VARIABLES_KEPT_FROM_THE_SIGNER } from '../kms-emulator/steering-aws-variables.js';
import { dataDir, sandboxKeyBackend, sandboxPort, say, type SandboxKeyBackend } from './sandbox-settings.js';
import type { SandboxParts } from './sandbox-parts.js';

export interface SandboxKeys {
  keyBackend: SandboxKeyBackend;
  /** The signer's environment for this backend. */
  signerEnv: NodeJS.ProcessEnv;
}

async function startEmulatedKms(parts: SandboxParts): Promise<NodeJS.ProcessEnv> {
  const kmsPort = sandboxPort('TREASURY_SANDBOX_KMS_PORT', 4599);
  say(
    '• starting the KMS emulator (a TEST DOUBLE: it keeps the wallet keys in its own memory, lost when the sandbox stops)',
  );
  const pino = (await import('pino')).default;
  const kmsLog = pino(
    { level: 'info', name: 'kms-emulator' },
    pino.destination({ dest: path.join(dataDir, 'kms-emulator.log'), append: true, mkdir: true, sync: false }),
  );
  const kmsEmulator = await startKmsEmulator({ logger: kmsLog, ...(kmsPort === undefined ? {} : { port: kmsPort }) });
  parts.kmsEmulator = kmsEmulator;
  const client = kmsEmulator.clientEnv();
  return {
    TREASURY_KEY_BACKEND: 'aws-kms',
    TREASURY_KMS_REGION: kmsEmulator.region,
    TREASURY_KMS_ENDPOINT: kmsEmulator.url,
    TREASURY_KMS_TOMBSTONE_FILE: path.join(dataDir, 'kms-tombstones.json'),
    ...Object.fromEntries(AWS_VARIABLES_KEPT_FROM_THE_SIGNER.map((name) => [name, undefined])),
    AWS_REGION: client.AWS_REGION,
    AWS_ACCESS_KEY_ID: client.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: client.AWS_SECRET_ACCESS_KEY,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

async function startSoftHsm(): Promise<NodeJS.ProcessEnv> {
  say('• SoftHSM token and root KEK');
  const hsm = await initSoftHsmToken({ dir: path.join(dataDir, 'softhsm') });
  return {
    TREASURY_KEY_BACKEND: 'pkcs11',
    TREASURY_PKCS11_MODULE: hsm.modulePath,
    TREASURY_PKCS11_TOKEN_LABEL: hsm.tokenLabel,
    TREASURY_PKCS11_KEK_LABEL: hsm.kekLabel,
    TREASURY_PKCS11_PIN_FILE: hsm.pinFile,
    SOFTHSM2_CONF: hsm.softhsm2Conf,
  };
}

export async function startSandboxKeys(parts: SandboxParts): Promise<SandboxKeys> {
  const keyBackend = sandboxKeyBackend();
  const signerEnv = keyBackend === 'aws-kms' ? await startEmulatedKms(parts) : await startSoftHsm();
  return { keyBackend, signerEnv };
}
