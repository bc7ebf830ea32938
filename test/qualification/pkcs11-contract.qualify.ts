/**
 * The KeyBackend contract (../integration/signer/key-backend-contract.ts) against any PKCS#11 module, for
 * `npm run hsm:qualify` (ops/hsm/qualify.ts), which runs this file with mocha and reads its results. The token
 * is named by the environment the qualification sets: TREASURY_QUALIFY_MODULE, TREASURY_QUALIFY_TOKEN_LABEL,
 * TREASURY_QUALIFY_PIN_FILE, TREASURY_QUALIFY_KEK_LABEL. Not part of `npm test` (the file is not a *.test.ts).
 */
import fs from 'node:fs';
import { Pkcs11Backend } from '../../signer/backends/pkcs11/pkcs11-backend.js';
import type { Pkcs11BackendConfig } from '../../signer/config/signer-config.js';
import { describeKeyBackendContract, type ContractSubject } from '../integration/signer/key-backend-contract.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through npm run hsm:qualify`);
  return value;
}

describeKeyBackendContract(`PKCS#11 (${required('TREASURY_QUALIFY_MODULE')})`, async (): Promise<ContractSubject> => {
  const config: Pkcs11BackendConfig = {
    kind: 'pkcs11',
    modulePath: required('TREASURY_QUALIFY_MODULE'),
    tokenLabel: required('TREASURY_QUALIFY_TOKEN_LABEL'),
    pin: fs.readFileSync(required('TREASURY_QUALIFY_PIN_FILE'), 'utf8').trim(),
    kekLabel: required('TREASURY_QUALIFY_KEK_LABEL'),
    sessions: 4,
    signInline: 'when_alone',
    cacheSize: 100,
    cacheTtlMs: 60_000,
  };
  const subject: ContractSubject = {
    backend: Pkcs11Backend.open(config),
    unavailableCode: 'hsm_unavailable',
    foreignRefs: {
      account: 'kms:v1:acct:0123456789abcdef0123456789abcdef',
      wallet: 'kms:v1:wal:1234abcd-12ab-34cd-56ef-1234567890ab',
    },
    async reopen() {
      await subject.backend.close();
      subject.backend = Pkcs11Backend.open(config);
      return subject.backend;
    },
    async close() {
      await subject.backend.close();
    },
  };
  return subject;
});
