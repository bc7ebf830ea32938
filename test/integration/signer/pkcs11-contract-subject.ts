/**
 * The KeyBackend contract's subject (./key-backend-contract.ts) for a PKCS#11 backend on `config`: the backend,
 * the code it answers when it cannot reach its keys, well-formed references of another backend, a restart (close
 * and open again on the same token) and `cleanup` after the last close. Shared by the SoftHSM contract test and
 * `npm run hsm:qualify`'s run against any module (test/qualification/pkcs11-contract.qualify.ts).
 */
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import type { ContractSubject } from './key-backend-contract.js';

export function pkcs11ContractSubject(
  config: Pkcs11BackendConfig,
  cleanup: () => void = () => undefined,
): ContractSubject {
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
      cleanup();
    },
  };
  return subject;
}
