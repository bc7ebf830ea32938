/**
 * The KeyBackend contract (./key-backend-contract.ts) against the PKCS#11 backend on a throwaway SoftHSM
 * token, in-process; a restart closes the module and opens the token again (tombstones live in the
 * token). SoftHSM runs in this process, so there is no transport to fault: those tests are skipped here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { describeKeyBackendContract, type ContractSubject } from './key-backend-contract.js';
import { pkcs11ContractSubject } from './pkcs11-contract-subject.js';

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
  return pkcs11ContractSubject(config, () => {
    if (previousConf === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previousConf;
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
