/**
 * What the KMS emulator tests share: an emulator with a silent logger, a real `@aws-sdk/client-kms`
 * client pointed at it (no retries unless asked, fixed small retry delays when asked), a signing key
 * made the way the AWS KMS backend makes one, and `kmsFailure(call)` to read the SDK's error the way
 * a backend must: by `name`, `$fault` and HTTP status, never by `instanceof` or message.
 */
import assert from 'node:assert/strict';
import { CreateKeyCommand, KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { pino } from 'pino';
import { keccak256, toBytes } from 'viem';
import { lateBound } from '../../support/late-bound.js';
import {
  startKmsEmulator,
  type KmsEmulator,
  type StartKmsEmulatorOptions,
} from '../../../ops/kms-emulator/kms-emulator.js';

export async function startQuietKmsEmulator(options: StartKmsEmulatorOptions = {}): Promise<KmsEmulator> {
  return startKmsEmulator({ logger: pino({ level: 'silent' }), ...options });
}

/** A KMSClient on the emulator; `retries: n` gives n + 1 attempts 10 ms apart, default one attempt. */
export function kmsClient(kms: KmsEmulator, options: { retries?: number } & Partial<KMSClientConfig> = {}): KMSClient {
  const { retries = 0, ...config } = options;
  return new KMSClient({
    ...kms.clientConfig(),
    ...(retries > 0 ? { retryStrategy: new ConfiguredRetryStrategy(retries + 1, () => 10) } : { maxAttempts: 1 }),
    ...config,
  });
}

export async function createSigningKey(
  client: KMSClient,
  tags: Record<string, string> = {},
): Promise<{ keyId: string; arn: string }> {
  const out = await client.send(
    new CreateKeyCommand({
      KeySpec: 'ECC_SECG_P256K1',
      KeyUsage: 'SIGN_VERIFY',
      Description: 'treasury test wallet key',
      Tags: Object.entries(tags).map(([TagKey, TagValue]) => ({ TagKey, TagValue })),
    }),
  );
  assert.ok(out.KeyMetadata?.KeyId && out.KeyMetadata.Arn);
  return { keyId: out.KeyMetadata.KeyId, arn: out.KeyMetadata.Arn };
}

export interface KmsFailure {
  name: string;
  message: string;
  fault: string | undefined;
  status: number | undefined;
  attempts: number | undefined;
  code: string | undefined;
}

/** Runs `call`, which must fail, and answers how the SDK reported the failure. */
export async function kmsFailure(call: Promise<unknown>): Promise<KmsFailure> {
  try {
    await call;
  } catch (err) {
    const e = err as Error & {
      $fault?: string;
      $metadata?: { httpStatusCode?: number; attempts?: number };
      code?: string;
    };
    return {
      name: e.name,
      message: e.message,
      fault: e.$fault,
      status: e.$metadata?.httpStatusCode,
      attempts: e.$metadata?.attempts,
      code: e.code,
    };
  }
  assert.fail('the KMS call succeeded but was expected to fail');
}

/** A 32-byte Keccak-256 digest, as the signer computes for EIP-712 messages. */
export const digestOf = (label: string): Uint8Array => keccak256(toBytes(label), 'bytes');

/** A quiet emulator and an SDK client on it for the enclosing suite (started before it, closed after it). */
export function useKmsEmulatorClient(): { kms: KmsEmulator; client: KMSClient } {
  let kms: KmsEmulator | undefined;
  let client: KMSClient | undefined;
  before(async () => {
    kms = await startQuietKmsEmulator();
    client = kmsClient(kms);
  });
  after(async () => {
    client?.destroy();
    await kms?.close();
  });
  return { kms: lateBound(() => kms, 'the KMS emulator'), client: lateBound(() => client, 'the KMS client') };
}
