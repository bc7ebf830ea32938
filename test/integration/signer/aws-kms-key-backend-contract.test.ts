/**
 * The KeyBackend contract (./key-backend-contract.ts) against the AWS KMS backend, in-process, talking
 * to the KMS emulator (ops/kms-emulator/, a test double) over HTTP through the real @aws-sdk/client-kms,
 * SigV4-signed with the emulator's test credentials; tombstones in a file that outlives a restart; fault
 * tests through the emulator's throttling, stalls, lost answers and refused connections.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startKmsEmulator, type KmsEmulator } from '../../../ops/kms-emulator/kms-emulator.js';
import { AwsKmsBackend } from '../../../signer/backends/aws-kms/aws-kms-backend.js';
import type { AwsKmsBackendConfig } from '../../../signer/config/signer-config.js';
import { describeKeyBackendContract, type ContractSubject } from './key-backend-contract.js';

function kmsConfig(kms: KmsEmulator, dir: string, overrides: Partial<AwsKmsBackendConfig> = {}): AwsKmsBackendConfig {
  return {
    kind: 'aws-kms',
    region: kms.region,
    endpoint: kms.url,
    signRatePerSecond: 0,
    // Generous: the emulator signs in this very process, on a shared 2-core machine.
    deadlineMs: 15_000,
    attemptTimeoutMs: 5000,
    deletionWindowDays: 7,
    aliasPrefix: 'treasury-test',
    maxInFlight: 64,
    tombstoneFile: path.join(dir, 'kms-tombstones'),
    signerPrincipalArn: undefined,
    adminPrincipalArn: undefined,
    cacheSize: 1000,
    ...overrides,
  };
}

describeKeyBackendContract('AWS KMS (emulator, real SDK)', async (): Promise<ContractSubject> => {
  const kms = await startKmsEmulator({ logger: pino({ level: 'silent' }) });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-contract-'));
  const credentials = kms.clientConfig().credentials;
  const open = (overrides: Partial<AwsKmsBackendConfig> = {}, observer = {}) => AwsKmsBackend.open(kmsConfig(kms, dir, overrides), observer, { sdk: { credentials } });
  const subject: ContractSubject = {
    backend: open(),
    unavailableCode: 'backend_unavailable',
    foreignRefs: { account: 'p11:v1:acct:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', wallet: 'p11:v1:wal:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    async reopen() {
      await subject.backend.close();
      subject.backend = open();
      return subject.backend;
    },
    async openFaulty({ signRatePerSecond, deadlineMs }) {
      let throttles = 0;
      const backend = open({ signRatePerSecond, deadlineMs, attemptTimeoutMs: Math.min(deadlineMs, 1000) }, { kmsThrottle: () => void throttles++ });
      return {
        backend,
        faults: {
          deadlineMs,
          throttleSign: (perSecond, burst) => kms.faults.rateLimit({ perSecond, burst, operations: ['Sign'] }),
          unreachable: () => kms.faults.unreachable('refuse'),
          stallSign: () => kms.faults.stall({ operations: ['Sign'] }),
          loseNextCreateAnswer: () => kms.faults.drop({ phase: 'after', operations: ['CreateKey'], count: 1 }),
          reset: () => kms.faults.reset(),
          digestsSignedTwice: () => kms.stats.digestsSignedMoreThanOnce().length,
          createKeysReceived: () => kms.stats.received('CreateKey'),
          throttlesSeen: () => throttles,
        },
      };
    },
    async close() {
      await subject.backend.close();
      await kms.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return subject;
});
