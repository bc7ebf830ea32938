/**
 * The KeyBackend contract (./key-backend-contract.ts) against the PKCS#11 backend on a throwaway SoftHSM
 * token, in-process; a restart closes the module and opens the token again (tombstones live in the
 * token). SoftHSM runs in this process, so there is no transport to fault: those tests are skipped here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { describeKeyBackendContract, type ContractSubject } from './key-backend-contract.js';

describeKeyBackendContract('PKCS#11 (SoftHSM)', async (): Promise<ContractSubject> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-p11-contract-'));
  const token = await initSoftHsmToken({ dir });
  const previousConf = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = token.softhsm2Conf; // read by SoftHSM at C_Initialize
  const config: Pkcs11BackendConfig = {
    kind: 'pkcs11',
    modulePath: token.modulePath,
    tokenLabel: token.tokenLabel,
    pin: fs.readFileSync(token.pinFile, 'utf8').trim(),
    kekLabel: token.kekLabel,
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
      if (previousConf === undefined) delete process.env.SOFTHSM2_CONF;
      else process.env.SOFTHSM2_CONF = previousConf;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return subject;
});
