/**
 * The KeyBackend contract (../integration/signer/key-backend-contract.ts) against any PKCS#11 module, for
 * `npm run hsm:qualify` (ops/hsm/qualify.ts), which runs this file with mocha and reads its results. The token
 * is named by the environment the qualification sets: TREASURY_QUALIFY_MODULE, TREASURY_QUALIFY_TOKEN_LABEL,
 * TREASURY_QUALIFY_PIN_FILE, TREASURY_QUALIFY_KEK_LABEL. Not part of `npm test` (the file is not a *.test.ts).
 */
import fs from 'node:fs';
import type { Pkcs11BackendConfig } from '../../signer/config/signer-config.js';
import { describeKeyBackendContract, type ContractSubject } from '../integration/signer/key-backend-contract.js';
import { pkcs11ContractSubject } from '../integration/signer/pkcs11-contract-subject.js';

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
  return pkcs11ContractSubject(config);
});
