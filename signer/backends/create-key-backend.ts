/**
 * Builds the configured KeyBackend in-process — for main.ts, and for benchmarks and ops tools that
 * want the backend without the socket (see ../bench/measure-backend-sign-rate.ts).
 *
 * Protects against: a backend kind being configured but silently not honoured — the switch is exhaustive.
 * Known limits: opening a PKCS#11 backend initialises the module for the whole process; open one per process.
 */
import type { BackendConfig } from '../config/signer-config.js';
import { AwsKmsBackend, type KmsBackendObserver } from './aws-kms/aws-kms-backend.js';
import type { KeyBackend } from './key-backend.js';
import { Pkcs11Backend, type BackendObserver as Pkcs11Observer } from './pkcs11/pkcs11-backend.js';

/** What the metrics want to hear from either backend. */
export type BackendObserver = Pkcs11Observer & KmsBackendObserver;

export function createKeyBackend(config: BackendConfig, observer: BackendObserver = {}): KeyBackend {
  switch (config.kind) {
    case 'pkcs11':
      return Pkcs11Backend.open(config, observer);
    case 'aws-kms':
      return AwsKmsBackend.open(config, observer);
    default: {
      const unknown: never = config;
      throw new Error(`unsupported signer backend ${String((unknown as { kind?: unknown }).kind)}`);
    }
  }
}
